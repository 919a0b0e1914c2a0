//! The clause-type rule of the learned ranker, checked against lawyers' ratings in ACORD
//! (`../shared/data/acord`): for every training query that names a CUAD clause type, the
//! clauses rated three stars or more must read as that type, and the one-star clauses (other
//! categories) must not.

use std::path::Path;

use precedent_clause_types::cache::load_or_train_classifier;
use precedent_clause_types::clause_classifier::ClassifierOptions;
use precedent_cuad::named_in_query;
use precedent_learn::{types_asked_for, ClauseTypeReader};

mod acord;

use acord::{jsonl, shared};

/// The classifier `search`, `eval` and `train` use, from the same cache as a CLI run at the root.
fn classifier() -> impl ClauseTypeReader {
    let cache =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.precedent/cache/clause-classifier");
    load_or_train_classifier(
        &shared().join("cuad"),
        &cache,
        &ClassifierOptions::for_acord(),
        || eprintln!("training the clause classifier (once)"),
    )
    .expect("clause classifier")
}

#[test]
fn clauses_rated_relevant_read_as_the_type_the_query_names() {
    let acord = shared().join("acord");
    let corpus = jsonl(&acord.join("corpus.jsonl"), "text");
    let queries = jsonl(&acord.join("queries.jsonl"), "text");
    let reader = classifier();

    // Every rating of a training query that names a type: (read as it, clauses) per star band.
    let mut relevant = (0usize, 0usize);
    let mut two_star = (0usize, 0usize);
    let mut one_star = (0usize, 0usize);
    let mut named_queries = 0;
    for split in ["train.tsv", "valid.tsv"] {
        // Read by the project's reader: the file quotes ids CSV-style and ends lines in CRLF.
        let qrels = precedent_formats::read_qrels(&acord.join("qrels").join(split)).expect("qrels");
        for (query, judged) in qrels.iter() {
            let named = named_in_query(&queries[query]);
            if named == 0 {
                continue;
            }
            named_queries += 1;
            for (clause, &label) in judged {
                let reads = reader
                    .clause_types(&corpus[clause])
                    .expect("a loaded classifier always answers")
                    & named
                    != 0;
                let tally = match label {
                    0 => &mut one_star,
                    1 => &mut two_star,
                    _ => &mut relevant,
                };
                tally.0 += usize::from(reads);
                tally.1 += 1;
            }
        }
    }
    eprintln!(
        "read as the named type: 3-5 stars {relevant:?}, 2 stars {two_star:?}, 1 star {one_star:?} ({named_queries} queries name a type)"
    );
    assert!(relevant.1 > 200, "{relevant:?}");
    assert!(
        relevant.0 as f64 >= 0.9 * relevant.1 as f64,
        "relevant clauses read as the named type: {relevant:?}"
    );
    assert!(
        one_star.0 as f64 <= 0.03 * one_star.1 as f64,
        "one-star clauses read as the named type: {one_star:?}"
    );
    // Two-star clauses are the query's category but not its answer: the type separates some.
    assert!(
        (two_star.0 as f64 / two_star.1 as f64) < (relevant.0 as f64 / relevant.1 as f64),
        "{two_star:?} vs {relevant:?}"
    );
}

/// Queries in ACORD's medium and long wordings mostly describe a clause type instead of naming it
/// ("Clause that restricts a party's ability to compete ..."). The types read in the description
/// must pick out the clauses lawyers rated well, as the named types do for the short wording.
#[test]
fn types_read_in_a_described_query_pick_out_the_relevant_clauses() {
    let acord = shared().join("acord");
    let corpus = jsonl(&acord.join("corpus.jsonl"), "text");
    let reader = classifier();
    let splits: Vec<_> = ["train.tsv", "valid.tsv"]
        .iter()
        .map(|split| {
            precedent_formats::read_qrels(&acord.join("qrels").join(split)).expect("qrels")
        })
        .collect();

    for wording in ["queries_medium.jsonl", "queries_long.jsonl"] {
        let queries = jsonl(&acord.join(wording), "text");
        let (mut described, mut relevant, mut one_star) = (0, (0usize, 0usize), (0usize, 0usize));
        for (query, judged) in splits.iter().flat_map(|q| q.iter()) {
            let text = &queries[query];
            if named_in_query(text) != 0 {
                continue;
            }
            let asked = types_asked_for(text, &reader);
            if asked == 0 {
                continue;
            }
            described += 1;
            for (clause, &label) in judged {
                let reads = reader.clause_types(&corpus[clause]).unwrap_or(0) & asked != 0;
                let tally = match label {
                    0 => &mut one_star,
                    1 => continue,
                    _ => &mut relevant,
                };
                tally.0 += usize::from(reads);
                tally.1 += 1;
            }
        }
        eprintln!(
            "{wording}: {described} queries describe a type; read as it: 3-5 stars {relevant:?}, 1 star {one_star:?}"
        );
        assert!(described >= 10, "{wording}: {described}");
        let rate = |t: (usize, usize)| t.0 as f64 / t.1.max(1) as f64;
        assert!(rate(relevant) >= 0.85, "{wording}: {relevant:?}");
        assert!(rate(one_star) <= 0.02, "{wording}: {one_star:?}");
    }
}
