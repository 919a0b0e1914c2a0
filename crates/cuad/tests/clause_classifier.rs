//! The single-clause classifier on real CUAD spans and LegalBench rows (a subset of the contracts,
//! to keep CI fast; the full development figure is in BENCHMARKS.md).

use std::path::Path;

use precedent_cuad::clause_classifier::{
    cross_validate, dev_report, span_examples, ClassifierOptions, ClauseClassifier,
};
use precedent_cuad::legalbench::{read_examples, tasks};
use precedent_cuad::load;
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

#[test]
fn cross_validated_on_contracts_and_scores_legalbench_rows() {
    let data = load(&shared().join("cuad")).unwrap();
    let contracts: Vec<&_> = data.contracts.iter().take(120).collect();
    let options = ClassifierOptions {
        threshold_folds: 3,
        ..ClassifierOptions::default()
    };

    // Contract-level CV: the classifier never saw the contracts whose spans it scores.
    let spans = cross_validate(&contracts, 3, &options, &[], |_, _| {}).unwrap();
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
