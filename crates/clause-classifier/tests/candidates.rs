//! The candidate spans against CUAD's annotations on the shared contracts.

use std::path::Path;

use precedent_clause_classifier::{candidates::candidates, labels::label};
use precedent_cuad::{load, CATEGORIES};
use rayon::prelude::*;

fn cuad_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad"
    ))
}

/// The recall ceiling of the candidates, as the scorer matches (labels by words, anywhere in the
/// contract): the short answers (names and dates, blanks of unsigned forms, split ordinals,
/// repeated titles) are where candidates fell short before the splitter learnt them, so they are
/// checked on their own.
#[test]
fn candidates_reach_nearly_every_annotation() {
    let data = load(cuad_dir()).expect("CUAD loads");
    let per_contract: Vec<Vec<(usize, bool)>> = data
        .contracts
        .par_iter()
        .map(|c| {
            let l = label(c, &candidates(&c.text));
            c.annotations
                .iter()
                .zip(&l.annotation_hits)
                .map(|(a, hits)| (a.category, !hits.is_empty()))
                .collect()
        })
        .collect();
    let mut found = [(0usize, 0usize); CATEGORIES.len()];
    for (k, hit) in per_contract.into_iter().flatten() {
        found[k].0 += 1;
        found[k].1 += usize::from(hit);
    }
    let share = |(n, hit): (usize, usize)| hit as f64 / n as f64;
    let (n, hit) = found
        .iter()
        .fold((0, 0), |acc, f| (acc.0 + f.0, acc.1 + f.1));
    assert!(share((n, hit)) >= 0.975, "{hit} of {n}");
    for name in [
        "Document Name",
        "Parties",
        "Agreement Date",
        "Effective Date",
    ] {
        let k = CATEGORIES
            .iter()
            .position(|c| *c == name)
            .expect("a category");
        assert!(share(found[k]) >= 0.96, "{name}: {:?}", found[k]);
    }
}
