//! Judgements made on hand-cut clauses, carried over to a library cut from the contracts.
//!
//! ACORD's annotators cut its 3,931 clauses out of contracts by hand, and the paper names that
//! as the benchmark's limit: "real-life clause retrieval would require the models first to
//! extract the Clause Corpus from the Contract Corpus." Most ACORD clauses come from the CUAD
//! contracts (about three in four of them are found word for word in the 398 shared ones), so
//! the experts' ratings can score retrieval over a library that `precedent ingest` cut from those
//! contracts itself: each ACORD clause is placed in its contract's text, and a library clause
//! takes the ratings of the ACORD clauses it overlaps.
//!
//! Placement compares letters and digits only, lowercased: ACORD's cuts differ from the
//! contract files in spacing, line breaks, quotes and dashes. A clause of several pieces joined
//! with `<omitted>` (ACORD's mark for text cut out, e.g. a cross-referenced section) is placed
//! piece by piece, in the contract where its longest piece is found. Pieces shorter than
//! [`MIN_PLACED_CHARS`] folded characters are not placed on their own: they would match
//! boilerplate anywhere.
//!
//! The overlap rule is the one `eval-cuad --clause-types` uses for CUAD spans: a library clause
//! takes an ACORD clause's rating when they share at least half of the shorter of the two.
//! A section ACORD cut whole that the library splits into subsections gives its rating to each
//! subsection; a library clause that holds several rated clauses keeps the best rating.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;
use precedent_formats::{CorpusDoc, Qrels};
use serde::Serialize;

/// Folded characters (letters and digits) a piece needs to be placed on its own, and the
/// length of the anchors that place it.
pub const MIN_PLACED_CHARS: usize = 40;

/// Share of a piece's folded characters that must be found, in order, in one contract.
pub const MIN_PIECE_COVERAGE: f64 = 0.5;

/// A library clause and where it lies in its contract's text.
#[derive(Debug, Clone)]
pub struct SourceClause {
    /// The library clause id (`contract#n`).
    pub id: String,
    /// Index of its contract in the `contracts` given to [`transfer_judgements`].
    pub contract: usize,
    /// Character offsets in the contract's text (the span `ingest` stores), end exclusive.
    pub start: usize,
    pub end: usize,
}

/// What was carried over, and how much of it could be.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TransferStats {
    /// Clauses of the corpus that some query judges.
    pub judged_clauses: usize,
    /// Of those, placed in a contract's text.
    pub placed_clauses: usize,
    /// Of those placed, overlapping at least one library clause by the half-of-the-shorter rule.
    pub mapped_clauses: usize,
    /// Library clauses that received at least one judgement.
    pub library_clauses_judged: usize,
    /// Per query: relevant corpus clauses (label >= 2, ACORD's three stars and up) judged, and
    /// how many of them reached a library clause.
    pub relevant_judged: usize,
    pub relevant_mapped: usize,
    /// Queries with at least one relevant library clause after the transfer.
    pub queries_with_relevant: usize,
    pub queries: usize,
}

/// The transferred judgements and their statistics.
#[derive(Debug, Clone)]
pub struct Transferred {
    pub qrels: Qrels,
    pub stats: TransferStats,
    /// Library clause ids each corpus clause was carried to (only those carried anywhere).
    pub mapping: HashMap<String, Vec<String>>,
}

/// A text reduced to lowercase letters and digits, with each byte's character offset in the
/// original text.
struct Folded {
    bytes: Vec<u8>,
    origin: Vec<usize>,
}

fn fold(text: &str) -> Folded {
    let mut bytes = Vec::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    let mut buf = [0u8; 4];
    for (i, c) in text.chars().enumerate() {
        if !c.is_alphanumeric() {
            continue;
        }
        for lower in c.to_lowercase() {
            let encoded = lower.encode_utf8(&mut buf).as_bytes();
            bytes.extend_from_slice(encoded);
            origin.extend(std::iter::repeat_n(i, encoded.len()));
        }
    }
    Folded { bytes, origin }
}

/// The pieces of a corpus clause (split at `<omitted>`, any case), folded.
fn folded_pieces(text: &str) -> Vec<Vec<u8>> {
    let lower = text.to_lowercase();
    lower
        .split("<omitted>")
        .map(|piece| fold(piece).bytes)
        .filter(|piece| !piece.is_empty())
        .collect()
}

/// Where a piece begins its alignment with a contract: the first of its anchors found there.
#[derive(Clone, Copy)]
struct Anchor {
    /// Offset of the anchor in the piece.
    in_piece: usize,
    /// Offset of its first occurrence in the contract's folded text.
    in_text: usize,
}

/// A piece found in a contract: (contract, piece, the character spans it was matched on).
type Placement = (usize, usize, Vec<(usize, usize)>);

/// Aligns `piece` with `text` from an anchor: runs of equal bytes, and where they part, the
/// piece's next [`MIN_PLACED_CHARS`] bytes searched further on in the text, else earlier (ACORD
/// sometimes joins sentences from two places without an `<omitted>` mark, and the contract files
/// carry page numbers ACORD dropped). Returns the folded spans matched and how many bytes they hold.
fn align(piece: &[u8], text: &[u8], anchor: Anchor) -> (Vec<(usize, usize)>, usize) {
    let (mut i, mut j) = (anchor.in_piece, anchor.in_text);
    let mut spans = Vec::new();
    let mut matched = 0;
    while i < piece.len() && j < text.len() {
        let run = piece[i..]
            .iter()
            .zip(&text[j..])
            .take_while(|(a, b)| a == b)
            .count();
        if run > 0 {
            spans.push((j, j + run));
            matched += run;
            i += run;
            j += run;
            continue;
        }
        if i + MIN_PLACED_CHARS > piece.len() {
            break;
        }
        let next = &piece[i..i + MIN_PLACED_CHARS];
        // Further on first; then earlier (a sentence taken from before the one just read).
        match memchr::memmem::find(&text[j..], next) {
            Some(skip) => j += skip,
            None => match memchr::memmem::find(&text[..j], next) {
                Some(earlier) => j = earlier,
                // Nowhere: skip some of the piece and look again.
                None => i += MIN_PLACED_CHARS / 2,
            },
        }
    }
    (spans, matched)
}

/// Carries `qrels` (over `corpus` ids) to the library clauses cut from `contracts`.
///
/// Every judgement of a query on a corpus clause becomes a judgement on each library clause it
/// was carried to (the highest label wins where several meet); corpus clauses that cannot be
/// placed drop out, and library clauses no judged clause reaches stay unjudged (the condensed
/// protocol then leaves them out, the full protocol counts them irrelevant).
pub fn transfer_judgements(
    corpus: &[CorpusDoc],
    qrels: &Qrels,
    contracts: &[&str],
    clauses: &[SourceClause],
) -> Result<Transferred, aho_corasick::BuildError> {
    let judged: std::collections::HashSet<&str> = qrels
        .iter()
        .flat_map(|(_, docs)| docs.keys().map(String::as_str))
        .collect();
    let docs: Vec<&CorpusDoc> = corpus
        .iter()
        .filter(|d| judged.contains(d.id.as_str()))
        .collect();
    let pieces: Vec<Vec<Vec<u8>>> = docs.iter().map(|d| folded_pieces(&d.text)).collect();

    // Anchors: a piece's consecutive runs of MIN_PLACED_CHARS bytes (and its last ones), one
    // automaton pattern per distinct run.
    let mut pattern_ids: HashMap<&[u8], usize> = HashMap::new();
    let mut by_pattern: Vec<Vec<(usize, usize, usize)>> = Vec::new();
    for (d, doc_pieces) in pieces.iter().enumerate() {
        for (p, piece) in doc_pieces.iter().enumerate() {
            if piece.len() < MIN_PLACED_CHARS {
                continue;
            }
            let last = piece.len() - MIN_PLACED_CHARS;
            let offsets = (0..last)
                .step_by(MIN_PLACED_CHARS)
                .chain(std::iter::once(last));
            for k in offsets {
                let anchor = &piece[k..k + MIN_PLACED_CHARS];
                let id = *pattern_ids.entry(anchor).or_insert_with(|| {
                    by_pattern.push(Vec::new());
                    by_pattern.len() - 1
                });
                by_pattern[id].push((d, p, k));
            }
        }
    }
    let mut patterns: Vec<(&[u8], usize)> = pattern_ids.into_iter().collect();
    patterns.sort_by_key(|&(_, id)| id);
    // Fails only when the automaton would outgrow its limits (millions of clauses at once).
    let matcher = AhoCorasick::new(patterns.iter().map(|&(anchor, _)| anchor))?;

    let mut placements: Vec<Vec<Placement>> = vec![Vec::new(); docs.len()];
    for (c, text) in contracts.iter().enumerate() {
        let folded = fold(text);
        let mut first: HashMap<(usize, usize), Anchor> = HashMap::new();
        for m in matcher.find_overlapping_iter(&folded.bytes) {
            for &(d, p, k) in &by_pattern[m.pattern().as_usize()] {
                let found = Anchor {
                    in_piece: k,
                    in_text: m.start(),
                };
                first
                    .entry((d, p))
                    .and_modify(|a| {
                        if (k, m.start()) < (a.in_piece, a.in_text) {
                            *a = found;
                        }
                    })
                    .or_insert(found);
            }
        }
        for ((d, p), anchor) in first {
            let piece = &pieces[d][p];
            let (spans, matched) = align(piece, &folded.bytes, anchor);
            if (matched as f64) < MIN_PIECE_COVERAGE * piece.len() as f64 {
                continue;
            }
            let chars = spans
                .into_iter()
                .map(|(s, e)| (folded.origin[s], folded.origin[e - 1] + 1))
                .collect();
            placements[d].push((c, p, chars));
        }
    }

    let mut clauses_by_contract: HashMap<usize, Vec<&SourceClause>> = HashMap::new();
    for clause in clauses {
        clauses_by_contract
            .entry(clause.contract)
            .or_default()
            .push(clause);
    }
    let mut stats = TransferStats {
        judged_clauses: docs.len(),
        ..TransferStats::default()
    };
    let mut mapping: HashMap<String, Vec<String>> = HashMap::new();
    for (d, doc) in docs.iter().enumerate() {
        let Some(longest) = (0..pieces[d].len()).max_by_key(|&p| pieces[d][p].len()) else {
            continue;
        };
        // The contracts holding the longest piece; there, every placed piece counts.
        let mut homes: Vec<usize> = placements[d]
            .iter()
            .filter(|(_, p, _)| *p == longest)
            .map(|(c, _, _)| *c)
            .collect();
        homes.sort_unstable();
        homes.dedup();
        if homes.is_empty() {
            continue;
        }
        stats.placed_clauses += 1;
        let mut targets: Vec<String> = Vec::new();
        for c in homes {
            let spans: Vec<(usize, usize)> = placements[d]
                .iter()
                .filter(|(pc, _, _)| *pc == c)
                .flat_map(|(_, _, spans)| spans.iter().copied())
                .collect();
            let placed_len: usize = spans.iter().map(|(s, e)| e - s).sum();
            for clause in clauses_by_contract.get(&c).map_or(&[][..], Vec::as_slice) {
                let own = clause.end.saturating_sub(clause.start);
                let overlap: usize = spans
                    .iter()
                    .map(|&(s, e)| e.min(clause.end).saturating_sub(s.max(clause.start)))
                    .sum();
                if overlap > 0 && 2 * overlap >= placed_len.min(own) {
                    targets.push(clause.id.clone());
                }
            }
        }
        if !targets.is_empty() {
            stats.mapped_clauses += 1;
            targets.sort();
            targets.dedup();
            mapping.insert(doc.id.clone(), targets);
        }
    }

    let mut out = Qrels::new();
    let mut judged_library: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (query, judgements) in qrels.iter() {
        stats.queries += 1;
        let mut any_relevant = false;
        for (doc, &label) in judgements {
            if label >= 2 {
                stats.relevant_judged += 1;
            }
            let Some(targets) = mapping.get(doc) else {
                continue;
            };
            if label >= 2 {
                stats.relevant_mapped += 1;
                any_relevant = true;
            }
            for target in targets {
                judged_library.insert(target);
                let best = out
                    .judged(query)
                    .and_then(|j| j.get(target))
                    .map_or(label, |&previous| previous.max(label));
                out.insert(query, target, best);
            }
        }
        if any_relevant {
            stats.queries_with_relevant += 1;
        }
    }
    stats.library_clauses_judged = judged_library.len();
    Ok(Transferred {
        qrels: out,
        stats,
        mapping,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, text: &str) -> CorpusDoc {
        CorpusDoc::new(id, text)
    }

    fn clause(id: &str, contract: usize, text: &str, part: &str) -> SourceClause {
        let byte = text.find(part).expect("part of the contract");
        let start = text[..byte].chars().count();
        SourceClause {
            id: id.into(),
            contract,
            start,
            end: start + part.chars().count(),
        }
    }

    const CAP: &str = "IN NO EVENT SHALL EITHER PARTY'S AGGREGATE LIABILITY EXCEED THE FEES PAID IN THE TWELVE MONTHS BEFORE THE CLAIM.";
    const LAW: &str = "This Agreement is governed by the laws of the State of New York, without regard to its conflict of laws rules.";

    #[test]
    fn ratings_follow_clauses_into_the_contracts_they_were_cut_from() {
        let contract = format!(
            "1. Definitions. \u{201c}Fees\u{201d} means the fees.\n\n9. Limitation.\n(a) {CAP}\n(b) Neither party waives anything.\n\n12. Law. {LAW}\n"
        );
        let contracts = [contract.as_str()];
        let library = [
            clause("k#1", 0, &contract, "1. Definitions."),
            clause("k#2", 0, &contract, &format!("(a) {CAP}")),
            clause("k#3", 0, &contract, "(b) Neither party waives anything."),
            clause("k#4", 0, &contract, &format!("12. Law. {LAW}")),
        ];
        // ACORD's cut differs in spacing, case and quotes, and has an <omitted> piece.
        let corpus = [
            doc(
                "cap",
                &format!("  {}  <omitted> 12. Law. {LAW}", CAP.to_lowercase()),
            ),
            doc("law", &LAW.replace(' ', "\n")),
            doc(
                "elsewhere",
                "A clause from a contract that is not in the library at all, long enough.",
            ),
        ];
        let mut qrels = Qrels::new();
        qrels.insert("cap query", "cap", 4);
        qrels.insert("cap query", "law", 0);
        qrels.insert("cap query", "elsewhere", 3);
        qrels.insert("law query", "law", 3);
        let t = transfer_judgements(&corpus, &qrels, &contracts, &library).expect("transfer");
        // The cap clause covers k#2 and k#4 (its <omitted> piece); each keeps the best label.
        assert_eq!(t.mapping["cap"], vec!["k#2".to_string(), "k#4".to_string()]);
        assert_eq!(t.mapping["law"], vec!["k#4".to_string()]);
        assert!(!t.mapping.contains_key("elsewhere"));
        let cap = t.qrels.judged("cap query").expect("judged");
        assert_eq!(cap.get("k#2"), Some(&4));
        assert_eq!(cap.get("k#4"), Some(&4), "max of 4 (cap) and 0 (law)");
        assert_eq!(cap.get("k#1"), None, "unjudged stays unjudged");
        assert_eq!(
            t.qrels.judged("law query").and_then(|j| j.get("k#4")),
            Some(&3)
        );
        assert_eq!(t.stats.judged_clauses, 3);
        assert_eq!(t.stats.placed_clauses, 2);
        assert_eq!(t.stats.mapped_clauses, 2);
        assert_eq!(t.stats.relevant_judged, 3);
        assert_eq!(t.stats.relevant_mapped, 2);
        assert_eq!(t.stats.queries_with_relevant, 2);
    }

    #[test]
    fn a_clause_overlapping_too_little_gets_no_rating() {
        // The library clause takes only the rated sentence's last 20 characters, then another
        // provision: under half of the shorter of the two, so no rating.
        let contract = format!("{CAP} {LAW}");
        let contracts = [contract.as_str()];
        let law_start = contract.find(LAW).expect("law") - 20;
        let library = [SourceClause {
            id: "k#1".into(),
            contract: 0,
            start: law_start,
            end: contract.chars().count(),
        }];
        let corpus = [doc("cap", CAP)];
        let mut qrels = Qrels::new();
        qrels.insert("q", "cap", 4);
        let t = transfer_judgements(&corpus, &qrels, &contracts, &library).expect("transfer");
        assert!(t.qrels.judged("q").is_none(), "{:?}", t.qrels);
        assert_eq!(t.stats.placed_clauses, 1);
        assert_eq!(t.stats.mapped_clauses, 0);
    }

    #[test]
    fn sentences_joined_without_a_mark_are_placed_where_each_stands() {
        // ACORD sometimes joins a later sentence to an earlier one without `<omitted>`, and the
        // contract file has a page number inside the clause.
        let first = "The Supplier shall maintain commercial general liability insurance with limits of not less than five million dollars per occurrence.";
        let second = "Certificates of insurance naming the Company as additional insured shall be delivered within thirty days of the Effective Date.";
        let contract = format!(
            "7. Insurance. {first}\n\n- 12 -\n\n8. Audit. The Company may audit the Supplier's records once a year.\n\n9. Certificates. {second}\n"
        );
        let library = [
            clause("k#1", 0, &contract, &format!("7. Insurance. {first}")),
            clause(
                "k#2",
                0,
                &contract,
                "8. Audit. The Company may audit the Supplier's records once a year.",
            ),
            clause("k#3", 0, &contract, &format!("9. Certificates. {second}")),
        ];
        let corpus = [doc("ins", &format!("{first} {second}"))];
        let mut qrels = Qrels::new();
        qrels.insert("insurance", "ins", 3);
        let t =
            transfer_judgements(&corpus, &qrels, &[contract.as_str()], &library).expect("transfer");
        assert_eq!(t.mapping["ins"], vec!["k#1".to_string(), "k#3".to_string()]);
    }

    #[test]
    fn short_pieces_are_not_placed_on_their_own() {
        let contract = "Notices. Notices shall be in writing.";
        let corpus = [doc("short", "Notices shall be in writing.")];
        let mut qrels = Qrels::new();
        qrels.insert("q", "short", 2);
        let library = [SourceClause {
            id: "k#1".into(),
            contract: 0,
            start: 0,
            end: contract.chars().count(),
        }];
        let t = transfer_judgements(&corpus, &qrels, &[contract], &library).expect("transfer");
        assert_eq!(t.stats.placed_clauses, 0);
    }
}
