//! `precedent eval-unfair-tos` on the shared validation rows (predictions file, JSON figures,
//! floors), its errors on bad CSVs, and `precedent review` of a short terms of service written
//! in ordinary casing and punctuation: detected as terms of service, its unfair terms flagged.
//! One model is trained (on the shared training rows, embedding them: a minute or two) into the
//! clone's cache (`support::unfair_cache`), where the page's test finds it too.

mod support;

use std::process::Output;

use support::s;

fn precedent(args: &[&str]) -> Output {
    support::precedent_command()
        .args(args)
        .output()
        .expect("run precedent")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn evaluates_validation_and_reviews_terms_of_service() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = support::unfair_cache();
    let predictions = tmp.path().join("predictions.jsonl");
    let json = tmp.path().join("scores.json");
    let validation = support::unfair_data().join("unfair_tos_validation.csv");
    let out = precedent(&[
        "eval-unfair-tos",
        "--test",
        s(&validation),
        "--data",
        s(&support::unfair_data()),
        "--unfair-cache",
        s(&cache),
        "--fit-on",
        "train",
        "--predictions-out",
        s(&predictions),
        "--json-out",
        s(&json),
    ]);
    let stdout = ok(&out);
    assert!(
        stdout.contains("macro-F1") && stdout.contains("Arbitration"),
        "{stdout}"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&predictions)
        .expect("predictions")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2275);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["row"], i);
        assert!(line["labels"].is_array());
    }
    let figures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let macro_f1 = figures["scores"]["macro_f1"].as_f64().expect("macro");
    let micro_f1 = figures["scores"]["micro_f1"].as_f64().expect("micro");
    // Floors under the figures measured when the configuration was chosen (micro 94.6, macro
    // 74.0 with sentence vectors; 94.1 / 71.8 without).
    assert!(macro_f1 >= 0.725 && micro_f1 >= 0.94, "{figures}");

    // The review of a terms-of-service text, detected as such, with the model cached above.
    let out = precedent(&[
        "review",
        "--json",
        "--unfair-cache",
        s(&cache),
        "--unfair-data",
        s(&support::unfair_data()),
        "--fit-on",
        "train",
        s(&support::terms_of_service()),
    ]);
    let review: serde_json::Value = serde_json::from_str(ok(&out).trim()).expect("review json");
    assert_eq!(review["kind"], "tos");
    let flagged = review["flagged"].as_array().expect("flagged");
    let types_of = |needle: &str| -> Vec<String> {
        flagged
            .iter()
            .filter(|f| f["text"].as_str().is_some_and(|t| t.contains(needle)))
            .flat_map(|f| f["types"].as_array().cloned().unwrap_or_default())
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    let expect = [
        ("binding individual arbitration", "Arbitration"),
        (
            "governed by the laws of the State of California",
            "Choice of law",
        ),
        ("courts located in Santa Clara County", "Jurisdiction"),
        (
            "suspend or terminate your account",
            "Unilateral termination",
        ),
        ("modify these Terms at any time", "Unilateral change"),
        ("shall not be liable", "Limitation of liability"),
        ("By accessing or using the Service", "Contract by using"),
        ("remove any content you post", "Content removal"),
    ];
    let mut missed = Vec::new();
    for (needle, name) in expect {
        if !types_of(needle).iter().any(|t| t == name) {
            missed.push(name);
        }
    }
    // A short text of one invented company: most of the eight must be found where they are.
    assert!(missed.len() <= 2, "missed {missed:?} in {review}");
    // A harmless sentence is not flagged, nor a heading (shorter than any sentence of the
    // corpus), however unfair its words sound.
    assert!(types_of("write to us").is_empty(), "{review}");
    assert!(
        !flagged
            .iter()
            .any(|f| f["text"].as_str() == Some("5. Limitation of liability")),
        "{review}"
    );
    let checklist = review["checklist"].as_array().expect("checklist");
    assert_eq!(checklist.len(), 8);
    for f in flagged {
        let (start, end) = (
            f["start"].as_u64().expect("start"),
            f["end"].as_u64().expect("end"),
        );
        assert!(start < end);
        // Each type says why: phrases of the sentence's own words (lowercase form).
        let words: String = f["text"]
            .as_str()
            .expect("text")
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || c.is_whitespace())
            .collect();
        for t in f["types"].as_array().expect("types") {
            let c = t["confidence"].as_f64().expect("confidence");
            assert!((0.0..=1.0).contains(&c));
            let evidence = t["evidence"].as_array().expect("evidence");
            assert!(!evidence.is_empty(), "{f}");
            for phrase in evidence {
                let phrase = phrase.as_str().expect("phrase");
                assert!(
                    phrase
                        .split(' ')
                        .all(|w| words.split_whitespace().any(|x| x == w)),
                    "{phrase:?} is not in {f}"
                );
            }
        }
    }
    // The text output: a checklist, then the flagged sentences with position and confidence.
    let review_text = |extra: &[&str]| {
        let tos = support::terms_of_service();
        let data = support::unfair_data();
        let mut args = vec![
            "review",
            "--kind",
            "tos",
            "--unfair-cache",
            s(&cache),
            "--unfair-data",
            s(&data),
            "--fit-on",
            "train",
        ];
        args.extend_from_slice(extra);
        args.push(s(&tos));
        ok(&precedent(&args))
    };
    let text = review_text(&[]);
    assert!(
        text.contains("terms of service") && text.contains("[x] Arbitration"),
        "{text}"
    );
    assert!(text.contains("sentence "), "{text}");
    // --threshold keeps, in the text, the flags of that confidence or more: as many sentences
    // as the JSON has with such a type, and no weaker type shown.
    let bar = 0.6;
    let surer = flagged
        .iter()
        .filter(|f| {
            f["types"]
                .as_array()
                .expect("types")
                .iter()
                .any(|t| t["confidence"].as_f64().expect("confidence") >= bar)
        })
        .count();
    let barred = review_text(&["--threshold", "0.6"]);
    let lines: Vec<&str> = barred
        .lines()
        .filter(|l| l.trim_start().starts_with("sentence "))
        .collect();
    assert_eq!(lines.len(), surer, "{barred}");
    for line in lines {
        let types = line.split("] ").nth(1).expect("types after the span");
        for shown in types.split("; ") {
            let confidence: f64 = shown
                .rsplit(' ')
                .next()
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("no confidence in {shown:?}"));
            assert!(confidence >= bar, "{line}");
        }
    }
    // The arbitration sentence says why, in its own words.
    let why = text
        .lines()
        .find(|l| l.trim_start().starts_with("why Arbitration:"))
        .unwrap_or_else(|| panic!("no evidence line for arbitration in {text}"));
    assert!(why.contains("arbitration"), "{why}");
}

#[test]
fn bad_csvs_are_named_with_their_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("empty.csv", "", "empty file"),
        ("header.csv", "text,labels\n", "a header and no rows"),
        (
            "columns.csv",
            "sentence,labels\n\"a .\",[]\n",
            "no `text` column",
        ),
        (
            "labels.csv",
            "text,labels\n\"a .\",[]\n\"b .\",[1 x]\n",
            "line 3",
        ),
    ];
    // The CSV is read before any model is trained or loaded, so this fails fast.
    let eval_on = |path: &std::path::Path| {
        precedent(&[
            "eval-unfair-tos",
            "--test",
            s(path),
            "--unfair-cache",
            s(&tmp.path().join("cache")),
        ])
    };
    for (name, content, needle) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, content).expect("write");
        let out = eval_on(&path);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(name) && stderr.contains(needle),
            "{name}: {stderr}"
        );
    }
    // A file that is not there is said to be unreadable, not malformed.
    let out = eval_on(&tmp.path().join("missing.csv"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("missing.csv: cannot read") && !stderr.contains("malformed"),
        "{stderr}"
    );
}
