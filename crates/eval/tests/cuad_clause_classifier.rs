//! The single-clause classifier on real CUAD spans and LegalBench rows (a subset of the contracts,
//! to keep CI fast; the full development figure is in BENCHMARKS.md).

use std::path::Path;

use precedent_clause_types::clause_classifier::{
    cross_validate, dev_report, span_examples, training_examples, ClassifierOptions,
    ClauseClassifier, ALL_KNOWN,
};
use precedent_clause_types::typer::prepare;
use precedent_cuad::legalbench::{read_examples, tasks};
use precedent_cuad::load;
use precedent_eval::cuad::fold_clause_logits;
use precedent_metrics::balanced_accuracy;

fn shared() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
}

const EASY: [&str; 4] = [
    "Governing Law",
    "Audit Rights",
    "Anti-Assignment",
    "Insurance",
];

/// The second stage's classifier also learns from the sentences no annotation matches, each a
/// negative for every category; the LegalBench one only from the spans.
#[test]
fn unmatched_sentences_are_negatives_of_every_category() {
    let data = load(&shared().join("cuad")).unwrap();
    let contracts: Vec<&_> = data.contracts.iter().take(3).collect();
    let spans = span_examples(&contracts);
    assert_eq!(
        training_examples(&contracts, &ClassifierOptions::default()),
        spans
    );
    let all = training_examples(&contracts, &ClassifierOptions::for_second_stage());
    assert_eq!(all[..spans.len()], spans[..]);
    let unmatched = &all[spans.len()..];
    assert!(unmatched.len() > spans.len(), "{}", unmatched.len());
    for e in unmatched {
        assert_eq!(e.positive, 0);
        assert_eq!(e.known, ALL_KNOWN);
        assert!(contracts[e.group].text.contains(&e.text));
        // No annotated text of its contract is among them.
        assert!(
            !spans.iter().any(|s| s.group == e.group && s.text == e.text),
            "{}",
            e.text
        );
    }
    // Every contract contributes.
    for g in 0..3 {
        assert!(unmatched.iter().any(|e| e.group == g));
    }
}

/// The second stage's clause evidence is nested like the first stage's logits: a contract is
/// scored by classifiers trained only on the other folds' contracts (outer), or also without
/// the outer fold (inner).
#[test]
fn nested_clause_logits_never_see_the_scored_contract() {
    let data = load(&shared().join("cuad")).unwrap();
    let contracts: Vec<&_> = data.contracts.iter().take(12).collect();
    let prepared = prepare(&contracts);
    let options = ClassifierOptions {
        epochs: 2,
        ..ClassifierOptions::default()
    };
    let mut fits = 0;
    let nested = fold_clause_logits(&contracts, &prepared, 3, &options, |_, _| fits += 1).unwrap();
    assert_eq!(fits, 3 + 3);
    let examples = span_examples(&contracts);
    let without = |folds: &[usize]| {
        let train: Vec<_> = examples
            .iter()
            .filter(|e| !folds.contains(&(e.group % 3)))
            .cloned()
            .collect();
        let o = ClassifierOptions {
            threshold_folds: 0,
            ..options.clone()
        };
        ClauseClassifier::train(&train, &o, "test").unwrap()
    };
    // Contract 4 is in fold 1.
    let c = 4;
    let expect = |model: &ClauseClassifier| {
        model.candidate_logits(&contracts[c].text, &prepared[c].candidates)
    };
    assert_eq!(nested.outer[c], expect(&without(&[1])));
    assert_eq!(
        nested.inner[c][0].as_ref().unwrap(),
        &expect(&without(&[0, 1]))
    );
    assert_eq!(
        nested.inner[c][2].as_ref().unwrap(),
        &expect(&without(&[1, 2]))
    );
    assert!(nested.inner[c][1].is_none());
    assert_eq!(nested.outer[c].len(), prepared[c].candidates.len());
}

#[test]
fn cross_validated_on_contracts_and_scores_legalbench_rows() {
    let data = load(&shared().join("cuad")).unwrap();
    let contracts: Vec<&_> = data.contracts.iter().take(120).collect();
    let options = ClassifierOptions {
        threshold_folds: 3,
        ..ClassifierOptions::default()
    };

    // Contract-level CV: the classifier never saw the contracts whose spans it scores.
    let spans = cross_validate(&contracts, 3, &options, &[], None, |_, _| {}).unwrap();
    let report = dev_report(&spans, 3, &options);
    eprintln!("CV mean {:.3}: {:?}", report.mean, report.tasks);
    for task in EASY {
        let ba = report.tasks[task];
        assert!(ba > 0.9, "{task}: {ba}");
    }
    assert!(report.mean > 0.85, "{}", report.mean);

    // Trained on those contracts, it answers the shared few-shot rows of the easy tasks.
    let model = ClauseClassifier::train(&span_examples(&contracts), &options, "120").unwrap();
    for task in tasks(&shared().join("legalbench"))
        .unwrap()
        .iter()
        .filter(|t| EASY.iter().any(|e| t.name == format!("CUAD_{e}")))
    {
        let rows = read_examples(&task.dir.join("train.tsv")).unwrap();
        let t = model.threshold(task.category);
        let ba = balanced_accuracy(
            rows.iter()
                .map(|r| (r.label, model.scores(&r.text)[task.category] >= t)),
        )
        .unwrap();
        eprintln!("{}: {ba:.3} on train.tsv", task.name);
        assert!(ba >= 0.8, "{}: {ba}", task.name);
    }
}
