//! Binary classification metrics (LegalBench reports balanced accuracy).

/// Balanced accuracy as scikit-learn's `balanced_accuracy_score`: the mean recall of the classes
/// present in `gold`. With both classes present this is (TPR + TNR) / 2; with one class only it is
/// that class's recall (sklearn warns and does the same). `None` when there are no examples.
///
/// LegalBench uses it because its CUAD tasks are balanced in test but a classifier that says "Yes"
/// to everything would still look good on plain accuracy in skewed development sets.
pub fn balanced_accuracy(pairs: impl IntoIterator<Item = (bool, bool)>) -> Option<f64> {
    // [gold class][predicted class]
    let mut counts = [[0u64; 2]; 2];
    for (gold, predicted) in pairs {
        counts[gold as usize][predicted as usize] += 1;
    }
    let recalls: Vec<f64> = (0..2)
        .filter_map(|class| {
            let total = counts[class][0] + counts[class][1];
            (total > 0).then(|| counts[class][class] as f64 / total as f64)
        })
        .collect();
    if recalls.is_empty() {
        None
    } else {
        Some(recalls.iter().sum::<f64>() / recalls.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_sklearn_values() {
        // sklearn.metrics.balanced_accuracy_score([1,1,1,0,0,0,0,0], [1,0,1,0,0,1,0,0]) = 0.7333..
        let gold = [true, true, true, false, false, false, false, false];
        let pred = [true, false, true, false, false, true, false, false];
        let got = balanced_accuracy(gold.into_iter().zip(pred)).unwrap();
        assert!((got - (2.0 / 3.0 + 4.0 / 5.0) / 2.0).abs() < 1e-12);
        assert!((got - 0.733_333_333_333_333_3).abs() < 1e-12);
        // All "Yes" on a balanced set is 0.5, not the 0.5 plain accuracy would also give on a
        // skewed set: on 1 positive / 9 negatives plain accuracy would be 0.1.
        let skewed = std::iter::once((true, true)).chain(std::iter::repeat_n((false, true), 9));
        assert_eq!(balanced_accuracy(skewed), Some(0.5));
    }

    #[test]
    fn one_class_and_empty() {
        assert_eq!(balanced_accuracy([(true, true), (true, false)]), Some(0.5));
        assert_eq!(balanced_accuracy(std::iter::empty()), None);
    }
}
