//! The clause readers behind the query constraints, checked against lawyers' ratings in ACORD
//! (`../shared/data/acord`): what a reader says of the clauses a training query rated must agree
//! with the stars they got.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use precedent_text::{Renewal, RenewalMode};

fn acord() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/acord"
    ))
    .to_path_buf()
}

fn corpus() -> HashMap<String, String> {
    let text = std::fs::read_to_string(acord().join("corpus.jsonl")).expect("ACORD corpus");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("corpus line");
            (
                v["_id"].as_str().expect("_id").to_owned(),
                v["text"].as_str().expect("text").to_owned(),
            )
        })
        .collect()
}

/// Clause ids `query` rated, with their label (0..4 = one to five stars), from train and valid.
fn ratings(query: &str) -> Vec<(String, u8)> {
    let mut out = Vec::new();
    for split in ["train.tsv", "valid.tsv"] {
        let text = std::fs::read_to_string(acord().join("qrels").join(split)).expect("qrels");
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() == 3 && cols[0] == query {
                out.push((cols[1].to_owned(), cols[2].parse().expect("label")));
            }
        }
    }
    assert!(!out.is_empty(), "no ratings for {query:?}");
    out
}

/// Share of the clauses rated within `labels` for which `reads` holds.
fn share(
    corpus: &HashMap<String, String>,
    rated: &[(String, u8)],
    labels: std::ops::RangeInclusive<u8>,
    reads: impl Fn(&str) -> bool,
) -> (usize, usize) {
    let texts: Vec<&str> = rated
        .iter()
        .filter(|(_, l)| labels.contains(l))
        .map(|(id, _)| corpus[id].as_str())
        .collect();
    (texts.iter().filter(|t| reads(t)).count(), texts.len())
}

#[test]
fn renewal_reader_agrees_with_the_auto_renewal_ratings() {
    let corpus = corpus();
    let rated = ratings("Clause that requires notice to terminate auto-renew");
    let fits = |t: &str| !Renewal::of(t).goes_against(RenewalMode::Automatic);
    // Four stars: all nine renew automatically.
    let (kept, all) = share(&corpus, &rated, 3..=3, fits);
    assert_eq!((kept, all), (9, 9));
    // Two stars (same category, not the answer): most do not renew by themselves (options to
    // renew, renewal by mutual agreement).
    let (kept, all) = share(&corpus, &rated, 1..=1, fits);
    assert!(
        all >= 15 && kept * 4 <= all,
        "{kept} of {all} two-star clauses kept"
    );
}
