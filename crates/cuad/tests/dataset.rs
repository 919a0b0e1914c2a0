//! CUAD as shared in ../shared/data/cuad: every contract found, spans placed.

use std::path::Path;

use precedent_cuad::{load, Placement};

fn cuad_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad"
    ))
}

#[test]
fn loads_all_contracts_and_places_spans() {
    let data = load(cuad_dir()).expect("CUAD loads");
    assert_eq!(data.contracts.len(), 398);
    assert!(
        data.report.missing_texts.is_empty(),
        "{:?}",
        data.report.missing_texts
    );
    let r = &data.report;
    eprintln!("{r:?}");
    assert_eq!(r.spans, 10224);
    // 556 spans are not verbatim substrings (checked with Python's `in`): all of them are pieces
    // joined with `<omitted>`, and every piece is verbatim.
    assert_eq!(r.discontiguous, 556);
    assert_eq!(r.exact, r.spans, "{r:?}");
    for c in &data.contracts {
        for a in &c.annotations {
            if let Some(span) = &a.span {
                let placed = &c.text[span.clone()];
                assert_eq!(a.placement, Placement::Exact);
                for piece in a.text.split("<omitted>") {
                    assert!(placed.contains(piece.trim()), "{}: {piece:?}", c.id);
                }
            }
        }
    }
}
