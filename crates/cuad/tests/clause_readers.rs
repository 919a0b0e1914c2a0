//! The retrieval side's clause readers (`precedent_text`) checked against CUAD's lawyers'
//! annotations: a reader that says "this clause provides liquidated damages" or "this clause
//! limits liability" must say so of the spans annotated as such, and mostly not of others.

use std::path::Path;

use precedent_cuad::{category_index, load};

fn cuad_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad"
    ))
}

/// Share of the annotated spans of `category` (across all contracts) that `reads` accepts.
fn accepted(category: &str, reads: impl Fn(&str) -> bool) -> (usize, usize) {
    let data = load(cuad_dir()).expect("CUAD loads");
    let index = category_index(category).expect("a CUAD category");
    let texts: Vec<String> = data
        .contracts
        .iter()
        .flat_map(|c| c.spans_of(index).map(|a| a.match_text()))
        .collect();
    (texts.iter().filter(|t| reads(t)).count(), texts.len())
}

#[test]
fn liquidated_damages_spans_read_as_provisions() {
    let (kept, all) = accepted(
        "Liquidated Damages",
        precedent_text::provides_liquidated_damages,
    );
    eprintln!("liquidated damages: {kept} of {all}");
    // 67 of 90 on 2026-11-23: the rest are fees and payments not called liquidated damages.
    assert!(all >= 50 && kept * 10 >= all * 7, "{kept} of {all}");
    // Caps are not liquidated-damages provisions, though they speak of damages and sums.
    let (kept, all) = accepted(
        "Cap on Liability",
        precedent_text::provides_liquidated_damages,
    );
    eprintln!("caps read as liquidated damages: {kept} of {all}");
    assert!(all >= 200 && kept * 20 <= all, "{kept} of {all}");
}

#[test]
fn cap_spans_limit_liability() {
    let (kept, all) = accepted("Cap on Liability", precedent_text::limits_liability);
    eprintln!("caps limiting liability: {kept} of {all}");
    // 317 of 508 on 2026-11-23: CUAD's cap spans are often fragments ("the liability of the
    // Airspan Parties, taken as a whole, for each event") or sole-remedy and time-bar clauses.
    assert!(all >= 200 && kept * 10 >= all * 6, "{kept} of {all}");
    let (kept, all) = accepted("Insurance", precedent_text::limits_liability);
    eprintln!("insurance spans limiting liability: {kept} of {all}");
    assert!(all >= 200 && kept * 10 <= all * 2, "{kept} of {all}");
}
