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
                // Each piece stands where its own text is, and the span covers them all.
                let written: Vec<&str> = a
                    .text
                    .split("<omitted>")
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .collect();
                assert_eq!(a.pieces.len(), written.len(), "{}: {:?}", c.id, a.text);
                for piece in &a.pieces {
                    let at = &c.text[piece.clone()];
                    assert!(written.contains(&at.trim()), "{}: {at:?}", c.id);
                    assert!(span.start <= piece.start && piece.end <= span.end);
                }
            }
        }
    }
}

#[test]
fn the_pieces_of_an_annotation_leave_out_what_lies_between_them() {
    let data = load(cuad_dir()).expect("CUAD loads");
    let contract = data
        .contracts
        .iter()
        .find(|c| {
            c.id.starts_with("ALLISONTRANSMISSIONHOLDINGSINC_12_15_2014")
        })
        .expect("the cooperation agreement is in the shared CUAD");
    let effective_date = precedent_cuad::category_index("Effective Date").expect("a category");
    let a = contract
        .spans_of(effective_date)
        .find(|a| a.text.contains("<omitted>"))
        .expect("its Effective Date is written in pieces");
    let span = a.span.clone().expect("placed");
    let pieces: usize = a.pieces.iter().map(|p| p.len()).sum();
    // The date in the preamble and the sentences near the end: the range between them holds
    // most of the contract, the pieces themselves under a hundred characters.
    assert!(span.len() > contract.text.len() / 2, "{span:?}");
    assert!(pieces < 100, "{:?}", a.pieces);
}
