//! `precedent review` on a TXT, an HTML, a PDF and a DOCX contract, `eval-legalbench` on the
//! shared task folders (typer and clause classifier), and the JSON shapes the README documents.
//! The models are small ones trained here on 30-40 CUAD contracts (the full ones take a minute).

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use precedent_clause_types::clause_classifier::{
    span_examples, ClassifierOptions, ClauseClassifier,
};
use precedent_clause_types::typer::prepare;
use precedent_clause_types::{ClauseTyper, TrainOptions};
use precedent_cuad::load;

fn shared() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
}

fn precedent(args: &[&str]) -> Output {
    support::precedent_command()
        .args(args)
        .output()
        .expect("run precedent")
}

/// [`precedent`] with `input` on its stdin.
fn precedent_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_precedent"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run precedent");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for precedent")
}

/// `precedent review` with the given typer and classifier models and further arguments.
fn review_with(typer: &Path, classifier: &Path, args: &[&str]) -> Output {
    let mut all = vec!["review", "--typer", s(typer), "--classifier", s(classifier)];
    all.extend_from_slice(args);
    precedent(&all)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Real clauses of a held-out CUAD contract (not among the 30 training contracts), as a short
/// contract: title, preamble, governing law and assignment clauses.
fn contract_lines() -> Vec<String> {
    let data = load(&shared().join("cuad")).unwrap();
    let c = data
        .contracts
        .iter()
        .skip(30)
        .find(|c| c.spans_of(7).next().is_some() && c.spans_of(18).next().is_some())
        .unwrap();
    let first = |k: usize| c.spans_of(k).next().unwrap().match_text();
    vec![
        "DISTRIBUTION AGREEMENT".to_owned(),
        format!("1. Assignment. {}", first(18)),
        format!("2. Governing Law. {}", first(7)),
    ]
}

fn write_docx(path: &Path, lines: &[String]) {
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let body: String = lines
        .iter()
        .map(|l| {
            format!(
                "<w:p><w:r><w:t xml:space=\"preserve\">{}</w:t></w:r></w:p>",
                escape(l)
            )
        })
        .collect();
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
    );
    let files = [
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#.to_owned()),
        ("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#.to_owned()),
        ("word/document.xml", document),
    ];
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    for (name, content) in files {
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(content.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

/// A one-page PDF with a text layer (Helvetica, one line per 90 characters).
fn write_pdf(path: &Path, lines: &[String]) {
    let mut wrapped: Vec<String> = Vec::new();
    for line in lines {
        let mut current = String::new();
        for word in line.split_whitespace() {
            if current.len() + word.len() > 90 {
                wrapped.push(std::mem::take(&mut current));
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        wrapped.push(current);
        wrapped.push(String::new());
    }
    let escape = |t: &str| {
        t.chars()
            .filter(|c| c.is_ascii())
            .collect::<String>()
            .replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)")
    };
    let mut content = String::from("BT /F1 10 Tf 12 TL 50 760 Td\n");
    for l in &wrapped {
        content.push_str(&format!("({}) Tj T*\n", escape(l)));
    }
    content.push_str("ET\n");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{content}endstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
    ];
    let mut pdf = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.push_str(&format!("{} 0 obj\n{o}\nendobj\n", i + 1));
    }
    let xref = pdf.len();
    pdf.push_str(&format!(
        "xref\n0 {}\n0000000000 65535 f \n",
        objects.len() + 1
    ));
    for off in offsets {
        pdf.push_str(&format!("{off:010} 00000 n \n"));
    }
    pdf.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    std::fs::write(path, pdf).unwrap();
}

/// A small typer and the classifier its second stage reads, trained on the first 30 CUAD
/// contracts and saved in `dir`: (typer file, classifier file).
fn small_models(dir: &Path) -> (PathBuf, PathBuf) {
    let data = load(&shared().join("cuad")).unwrap();
    let train: Vec<&_> = data.contracts.iter().take(30).collect();
    let prepared = prepare(&train);
    let typer = ClauseTyper::train(
        &prepared.iter().collect::<Vec<_>>(),
        &TrainOptions {
            epochs: 2,
            ..TrainOptions::default()
        },
        "test",
    );
    let model = dir.join("typer.bin");
    typer.save(&model).unwrap();
    // The clause classifier the typer's second stage reads, from the same contracts.
    let classifier = ClauseClassifier::train(
        &span_examples(&train),
        &ClassifierOptions {
            threshold_folds: 0,
            ..ClassifierOptions::default()
        },
        "test",
    )
    .unwrap();
    let classifier_model = dir.join("classifier.bin");
    classifier.save(&classifier_model).unwrap();
    (model, classifier_model)
}

#[test]
fn review_reads_every_format_and_prints_the_documented_json() {
    let dir = tempfile::tempdir().unwrap();
    let (model, classifier_model) = small_models(dir.path());

    let lines = contract_lines();
    let txt = dir.path().join("contract.txt");
    std::fs::write(&txt, lines.join("\n\n")).unwrap();
    let html = dir.path().join("contract.htm");
    let paragraphs: String = lines.iter().map(|l| format!("<p>{l}</p>\n")).collect();
    std::fs::write(&html, format!("<html><body>{paragraphs}</body></html>")).unwrap();
    let pdf = dir.path().join("contract.pdf");
    write_pdf(&pdf, &lines);
    let docx = dir.path().join("contract.docx");
    write_docx(&docx, &lines);

    let out = review_with(
        &model,
        &classifier_model,
        &["--json", s(&txt), s(&html), s(&pdf), s(&docx)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // By default the review reads the sentence-embedding view (MiniLM, which setup installs).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("word features only"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let reviews: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reviews.len(), 4);
    for review in &reviews {
        assert_eq!(
            review["metadata"]["title"], "DISTRIBUTION AGREEMENT",
            "{review}"
        );
        assert!(review["metadata"]["governing_law"].is_string(), "{review}");
    }
    // --fast reads word features only: the same candidates, other confidences.
    let out = review_with(&model, &classifier_model, &["--json", "--fast", s(&txt)]);
    assert!(out.status.success());
    let fast: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let confidences = |v: &serde_json::Value| -> Vec<(String, u64, f64)> {
        let mut c: Vec<(String, u64, f64)> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["category"].as_str().unwrap().to_owned(),
                    f["start"].as_u64().unwrap(),
                    f["confidence"].as_f64().unwrap(),
                )
            })
            .collect();
        c.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        c
    };
    let (with_view, word_only) = (confidences(&reviews[0]), confidences(&fast));
    assert!(
        with_view
            .iter()
            .zip(&word_only)
            .any(|(a, b)| (a.2 - b.2).abs() > 1e-4),
        "--fast gave the same confidences"
    );
    for (review, path) in reviews.iter().zip([&txt, &html, &pdf, &docx]) {
        assert_eq!(review["contract"], s(path));
        let findings = review["findings"].as_array().unwrap();
        // Every category gets its ranked candidates, each with the documented fields.
        for f in findings {
            for key in ["category", "text", "start", "end", "section", "confidence"] {
                assert!(f.get(key).is_some(), "{key} missing in {f}");
            }
            let c = f["confidence"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&c));
        }
        let categories: std::collections::HashSet<&str> = findings
            .iter()
            .map(|f| f["category"].as_str().unwrap())
            .collect();
        assert_eq!(categories.len(), 41);
        // The governing-law clause is the most confident Governing Law finding, cited by section.
        let law = findings
            .iter()
            .find(|f| f["category"] == "Governing Law")
            .unwrap();
        let text = law["text"].as_str().unwrap().to_lowercase();
        assert!(text.contains("law"), "{}: {law}", path.display());
        assert!(
            law["confidence"].as_f64().unwrap() > 0.3,
            "{}: {law}",
            path.display()
        );
        assert_eq!(law["section"], "2", "{}: {law}", path.display());
    }
    // Offsets are characters of the extracted text: the TXT's text is the file itself.
    let original: Vec<char> = std::fs::read_to_string(&txt).unwrap().chars().collect();
    for f in reviews[0]["findings"].as_array().unwrap() {
        let (start, end) = (
            f["start"].as_u64().unwrap() as usize,
            f["end"].as_u64().unwrap() as usize,
        );
        let slice: String = original[start..end].iter().collect();
        assert_eq!(slice, f["text"].as_str().unwrap());
    }

    // A folder is reviewed file by file, in path order; the model files beside the contracts
    // (typer.bin, classifier.bin) are not contracts and are skipped. A folder without any
    // contract is an error naming it.
    let out = review_with(
        &model,
        &classifier_model,
        &["--json", "--top", "1", s(dir.path())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let contracts: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["contract"].as_str().unwrap().to_owned()
        })
        .collect();
    let mut expected: Vec<String> = [&docx, &html, &pdf, &txt]
        .iter()
        .map(|p| s(p).to_owned())
        .collect();
    expected.sort();
    assert_eq!(contracts, expected);
    // --csv: the same folder as one table, a row per contract and a column per category with
    // its best finding's confidence.
    let out = review_with(&model, &classifier_model, &["--csv", s(dir.path())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut table = csv::Reader::from_reader(out.stdout.as_slice());
    let header = table.headers().unwrap().clone();
    assert_eq!(header.len(), 46);
    assert_eq!(
        header.iter().take(5).collect::<Vec<_>>(),
        ["contract", "title", "date", "governing_law", "parties"]
    );
    let law = header.iter().position(|h| h == "Governing Law").unwrap();
    let rows: Vec<csv::StringRecord> = table.records().map(|r| r.unwrap()).collect();
    assert_eq!(
        rows.iter().map(|r| r[0].to_owned()).collect::<Vec<_>>(),
        expected
    );
    for row in &rows {
        let confidence: f64 = row[law].parse().unwrap();
        assert!(confidence > 0.3, "{row:?}");
        // The metadata columns: every format carries the title line.
        assert_eq!(&row[1], "DISTRIBUTION AGREEMENT", "{row:?}");
    }
    let no_contracts = dir.path().join("models-only");
    std::fs::create_dir(&no_contracts).unwrap();
    std::fs::copy(&model, no_contracts.join("typer.bin")).unwrap();
    let out = review_with(&model, &classifier_model, &[s(&no_contracts)]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("models-only") && stderr.contains("no contract files"),
        "{stderr}"
    );

    // Text mode, and a bad file reported by name while the good one is still reviewed.
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let out = review_with(&model, &classifier_model, &[s(&empty), s(&txt)]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("empty.txt") && stderr.contains("1 of 2"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Governing Law"), "{stdout}");

    // eval-legalbench with the typer: balanced accuracy per task folder and the mean.
    let json_out = dir.path().join("lb.json");
    let out = precedent(&[
        "eval-legalbench",
        s(&shared().join("legalbench")),
        "--model",
        "typer",
        "--typer",
        s(&model),
        "--json-out",
        s(&json_out),
    ]);
    let mean = legalbench_mean(&out, &json_out, 38);
    assert!(mean > 0.5, "{mean}");
}

/// `review --checklist-csv` over a real CUAD contract (held out from the models' training):
/// a header and all 41 categories, some present with their spans and some absent without;
/// several files and terms of service are refused.
#[test]
fn review_writes_the_checklist_of_one_contract_as_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (model, classifier_model) = small_models(dir.path());
    let data = load(&shared().join("cuad")).unwrap();
    let contract = data
        .contracts
        .iter()
        .skip(30)
        .find(|c| c.spans_of(7).next().is_some())
        .unwrap();
    let out_csv = dir.path().join("checklist.csv");
    let out = review_with(
        &model,
        &classifier_model,
        &[
            "--fast",
            "--kind",
            "contract",
            s(&contract.path),
            "--checklist-csv",
            s(&out_csv),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same review as a Word report, which LibreOffice opens: the checklist table and every
    // type not found said in words.
    let out_docx = dir.path().join("report.docx");
    let report = review_with(
        &model,
        &classifier_model,
        &[
            "--fast",
            "--kind",
            "contract",
            s(&contract.path),
            "--report-docx",
            s(&out_docx),
        ],
    );
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let docx = std::fs::read(&out_docx).unwrap();
    let document = support::docx_part(&docx, "word/document.xml");
    assert_eq!(
        document.matches("<w:tr>").count(),
        42,
        "a header and 41 rows"
    );
    let odt = support::soffice_convert(&out_docx, "odt", dir.path());
    let content = support::docx_part(&std::fs::read(odt).unwrap(), "content.xml");
    assert!(content.contains("<table:table "), "{content}");
    assert!(content.contains("Clause types not found"), "{content}");
    assert!(content.contains(" clause found."), "{content}");
    let mut table = csv::Reader::from_path(&out_csv).unwrap();
    assert_eq!(
        table.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "category",
            "status",
            "band",
            "best_confidence",
            "sections",
            "offsets",
            "confidences",
            "text"
        ]
    );
    let rows: Vec<csv::StringRecord> = table.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 41);
    assert_eq!(
        rows.iter().map(|r| r[0].to_owned()).collect::<Vec<_>>(),
        precedent_cuad::CATEGORIES.to_vec()
    );
    let text: Vec<char> = contract.text.chars().collect();
    let present: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[1] == "present").collect();
    assert!(!present.is_empty(), "no category present: {rows:?}");
    for row in &present {
        assert_eq!(&row[2], "likely", "{row:?}");
        assert!(row[3].parse::<f64>().unwrap() >= 0.5, "{row:?}");
        // Each span's offsets point at text of the contract; spans are best first.
        let confidences: Vec<f64> = row[6].split("; ").map(|c| c.parse().unwrap()).collect();
        assert!(confidences.windows(2).all(|w| w[0] >= w[1]), "{row:?}");
        for offsets in row[5].split("; ") {
            let (start, end) = offsets.split_once('-').unwrap();
            let (start, end): (usize, usize) = (start.parse().unwrap(), end.parse().unwrap());
            assert!(start < end && end <= text.len(), "{row:?}");
        }
        assert!(!row[7].is_empty(), "{row:?}");
    }
    let absent: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[1] == "absent").collect();
    assert!(!absent.is_empty(), "every category present: {rows:?}");
    for row in &absent {
        assert_ne!(&row[2], "likely", "{row:?}");
        assert!(row.iter().skip(4).all(str::is_empty), "{row:?}");
    }
    // The text output still goes to stdout.
    assert!(String::from_utf8_lossy(&out.stdout).contains(&contract.path.display().to_string()));

    // One contract only, and not terms of service: refused before any model is loaded.
    let other = dir.path().join("other.txt");
    std::fs::write(
        &other,
        "This Agreement is governed by the laws of Delaware.",
    )
    .unwrap();
    let out = precedent(&[
        "review",
        s(&contract.path),
        s(&other),
        "--checklist-csv",
        s(&dir.path().join("two.csv")),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("one contract") && stderr.contains("2 files"),
        "{stderr}"
    );
    let out = precedent(&[
        "review",
        "--kind",
        "tos",
        s(&other),
        "--checklist-csv",
        s(&dir.path().join("tos.csv")),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("terms of service"), "{stderr}");
    assert!(!dir.path().join("two.csv").exists() && !dir.path().join("tos.csv").exists());
}

/// Checks `eval-legalbench`'s documented JSON ({"tasks": {"CUAD_<Category>": x}, "mean": x} with
/// `n` tasks) and returns its mean.
fn legalbench_mean(out: &Output, json_out: &Path, n: usize) -> f64 {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lb: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json_out).unwrap()).unwrap();
    let tasks = lb["tasks"].as_object().unwrap();
    assert_eq!(tasks.len(), n);
    assert!(tasks.contains_key("CUAD_Governing Law"));
    let mean = lb["mean"].as_f64().unwrap();
    let recomputed = tasks.values().map(|v| v.as_f64().unwrap()).sum::<f64>() / n as f64;
    assert!((mean - recomputed).abs() < 1e-12);
    mean
}

/// `eval-legalbench` with the single-clause classifier (its default): a small one trained here
/// on 40 contracts' spans answers the few-shot rows (and `classify`'s lone clauses);
/// `--dev-cuad` cross-validates it by contract.
#[test]
fn eval_legalbench_with_the_clause_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let data = load(&shared().join("cuad")).unwrap();
    let train: Vec<&_> = data.contracts.iter().take(40).collect();
    let classifier = ClauseClassifier::train(
        &span_examples(&train),
        &ClassifierOptions::default(),
        "test",
    )
    .unwrap();
    let model = dir.path().join("classifier.bin");
    classifier.save(&model).unwrap();
    let json_out = dir.path().join("lb.json");
    let out = precedent(&[
        "eval-legalbench",
        s(&shared().join("legalbench")),
        "--classifier",
        s(&model),
        "--split",
        "train",
        "--json-out",
        s(&json_out),
    ]);
    let mean = legalbench_mean(&out, &json_out, 38);
    assert!(mean > 0.7, "{mean}");
    // The few-shot rows' mean says what it is (the development run's, below, needs no note).
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("note: 38 of 38 tasks were scored on train.tsv"),
        "{stdout}"
    );

    // `--dev-cuad` on 40 contracts in 2 folds, with further arguments.
    let dev_cuad = |extra: &[&str]| {
        let legalbench = shared().join("legalbench");
        let cuad = shared().join("cuad");
        let mut args = vec![
            "eval-legalbench",
            s(&legalbench),
            "--dev-cuad",
            s(&cuad),
            "--limit",
            "40",
            "--folds",
            "2",
            "--json-out",
            s(&json_out),
        ];
        args.extend_from_slice(extra);
        precedent(&args)
    };
    let out = dev_cuad(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fold 2/2 done"), "{stderr}");
    // The default classifier reads the spans' MiniLM vectors besides their words.
    assert!(stderr.contains("with MiniLM"), "{stderr}");
    // And the held-out spans as `classify` lists them: the top type is mostly the annotated one.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("note:"), "{stdout}");
    let top: f64 = stdout
        .split("top type right ")
        .nth(1)
        .and_then(|rest| rest.split('%').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no listing summary in {stdout}"));
    assert!((50.0..=100.0).contains(&top), "{stdout}");
    // Sentences no annotation covers are scored too: what a clause of no type gets.
    assert!(
        stdout.contains("held-out sentences no annotation covers"),
        "{stdout}"
    );
    // Categories without an annotated span in the 40 contracts are skipped, and said so.
    let skipped = stderr.matches("no annotated span").count();
    let mean = legalbench_mean(&out, &json_out, 38 - skipped);
    assert!(mean > 0.7, "{mean}");
    let with_view = mean;
    // --words-only: the classifier without them (no embedding).
    let out = dev_cuad(&["--words-only"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("MiniLM"), "{stderr}");
    let words = legalbench_mean(&out, &json_out, 38 - skipped);
    assert!(words > 0.7 && words != with_view, "{words} {with_view}");

    // `classify` answers for lone clauses with the same model: one JSON line per clause, the
    // categories reaching their threshold, most confident first.
    let law = "This Agreement shall be governed by and construed in accordance with the laws of the State of New York, without regard to its conflict of laws principles.";
    let assign = "Neither party may assign this Agreement or any of its rights or obligations hereunder without the prior written consent of the other party.";
    let out = precedent(&["classify", law, assign, "--classifier", s(&model), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for (line, (text, category)) in lines
        .iter()
        .zip([(law, "Governing Law"), (assign, "Anti-Assignment")])
    {
        assert_eq!(line["text"], text);
        let types = line["types"].as_array().unwrap();
        assert_eq!(types[0]["category"], category, "{line}");
        for t in types {
            assert!(t["confidence"].as_f64().unwrap() >= t["threshold"].as_f64().unwrap());
        }
    }
    // A threshold that is not a confidence is refused.
    let out = precedent(&[
        "classify",
        law,
        "--threshold",
        "1.5",
        "--classifier",
        s(&model),
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("between 0 and 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // --all lists the 41 categories; stdin stands for "-"; the text output marks the answer.
    let out = precedent_with_stdin(&["classify", "-", "--all", "--classifier", s(&model)], law);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 41, "{stdout}");
    assert!(
        rows[0].contains("Governing Law") && rows[0].ends_with("likely"),
        "{stdout}"
    );
    assert!(rows[40].ends_with("no"), "{stdout}");
    // The text output says so when a clause gets no likely type (boilerplate of no CUAD type
    // usually reaches some threshold), and only then: it agrees with the JSON's marks.
    let boilerplate =
        "The headings in this Agreement are for convenience only and shall not affect its interpretation.";
    for clause in [law, boilerplate] {
        let json = precedent(&["classify", clause, "--classifier", s(&model), "--json"]);
        let line: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&json.stdout).trim()).unwrap();
        let types = line["types"].as_array().unwrap();
        let none_likely = !types.is_empty() && types.iter().all(|t| t["likely"] == false);
        let text = precedent(&["classify", clause, "--classifier", s(&model)]);
        let said = String::from_utf8_lossy(&text.stdout).contains("no type is likely");
        assert_eq!(said, none_likely, "{line}");
    }
    // One threshold for every category: at 0.99 the governing-law clause keeps at most its type.
    let out = precedent(&[
        "classify",
        law,
        "--classifier",
        s(&model),
        "--json",
        "--threshold",
        "0.99",
    ]);
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    let types = line["types"].as_array().unwrap();
    assert!(
        types.len() <= 1 && types.iter().all(|t| t["threshold"] == 0.99),
        "{line}"
    );
    // --paragraphs: a file of clauses on stdin, one per paragraph, one JSON line each.
    let out = precedent_with_stdin(
        &[
            "classify",
            "--paragraphs",
            "--json",
            "--classifier",
            s(&model),
        ],
        &format!("{law}\n\n\n{assign}\n"),
    );
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["text"], law);
    assert_eq!(lines[1]["types"][0]["category"], "Anti-Assignment");
    // No clause at all (stdin empty) is an error saying what is missing.
    let out = precedent(&["classify", "--classifier", s(&model)]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("clause 1 is empty"));

    // A missing model file is an error naming it, not a silent retrain.
    let missing = dir.path().join("missing.bin");
    let out = precedent(&[
        "eval-legalbench",
        s(&shared().join("legalbench")),
        "--classifier",
        s(&missing),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.bin"));
}

/// `eval-cuad --clause-types` cross-validates the clause types ingest writes (a quick run on a
/// few contracts; the full figures are in BENCHMARKS.md).
#[test]
fn clause_type_cross_validation_reports_precision_and_recall_per_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let json_out = dir.path().join("types.json");
    let out = precedent(&[
        "eval-cuad",
        "--cuad",
        s(&shared().join("cuad")),
        "--clause-types",
        "--limit",
        "15",
        // Three folds at least: the second stage's nested CV leaves two out.
        "--folds",
        "3",
        "--epochs",
        "1",
        "--json-out",
        s(&json_out),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    assert!(report["clauses"].as_u64().unwrap() > 100, "{report}");
    let rows = report["thresholds"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    let recalls: Vec<f64> = rows.iter().map(|r| r["recall"].as_f64().unwrap()).collect();
    assert!(recalls.windows(2).all(|w| w[0] >= w[1]), "{recalls:?}");
    assert!(recalls[0] > 0.0, "{recalls:?}");
    for r in rows {
        let p = r["precision"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{r}");
    }
    // 41 CUAD categories minus Parties and Document Name, which are not stored on clauses.
    assert_eq!(report["per_category"].as_array().unwrap().len(), 39);
}
