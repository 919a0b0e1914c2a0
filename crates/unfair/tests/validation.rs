//! Trains the shipped classifier on the shared UNFAIR-ToS training rows and scores the
//! validation rows with LexGLUE's metric: the figures must not fall below the floors measured
//! when the configuration was chosen (micro 94.1, macro 71.8 on validation).

use std::path::PathBuf;

use precedent_unfair::cache::{training_rows, TrainSplit, VALIDATION_FILE};
use precedent_unfair::model::evaluate;
use precedent_unfair::{read_csv, ModelOptions, UnfairModel};

fn data_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/unfair_tos"
    ))
}

#[test]
fn validation_scores_stay_above_the_measured_floor() {
    let train = training_rows(&data_dir(), TrainSplit::Train).expect("training rows");
    assert_eq!(train.len(), 5532);
    let validation = read_csv(&data_dir().join(VALIDATION_FILE)).expect("validation rows");
    assert_eq!(validation.len(), 2275);
    let model = UnfairModel::train(&train, &ModelOptions::default()).expect("train");
    let (scores, predictions) = evaluate(&model, &validation);
    assert_eq!(predictions.len(), validation.len());
    assert!(scores.micro_f1 >= 0.935, "micro-F1 {}", scores.micro_f1);
    assert!(scores.macro_f1 >= 0.70, "macro-F1 {}", scores.macro_f1);
    // Every label is found at least sometimes (none is left at F1 0 by a bad threshold).
    assert!(
        scores.per_column_f1.iter().all(|&f| f >= 0.3),
        "{:?}",
        scores.per_column_f1
    );
}
