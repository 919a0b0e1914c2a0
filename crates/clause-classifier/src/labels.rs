//! Which candidates count as correct answers: exactly the CUAD scoring rule (word-set Jaccard ≥ 0.5,
//! or containment for Parties), so the typer is trained on the targets it is scored on.

use precedent_metrics::spans::{span_matches, WordSet};

use crate::candidates::Candidate;
use precedent_cuad::categories::substring_ok;
use precedent_cuad::dataset::CuadContract;

/// Per candidate, a bit per category (bit `k` = matches an annotation of category `k`); and per
/// annotation, the candidates matching it.
pub struct Labels {
    pub candidate_bits: Vec<u64>,
    pub annotation_hits: Vec<Vec<u32>>,
}

/// Labels the candidates of one contract by their words alone, wherever they stand, as the
/// scorer matches predictions (Jaccard, or containment for Parties). Why not only the candidates
/// overlapping the annotation's placed span: short answers recur (the annotators mark "Services
/// Agreement" in the preamble and the title "SERVICES AGREEMENT" has the same words; a date is
/// repeated on the signature page), and the scorer credits any prediction whose words match.
/// Position-bound labels taught the typer that candidates the evaluation counts as found are
/// wrong (Document Name: 113 of 407 annotations had no positive candidate). A Jaccard of 0.5
/// needs word sets within a factor 2 in size, so only those pairs are compared.
pub fn label(contract: &CuadContract, candidates: &[Candidate]) -> Labels {
    label_within(contract, candidates, false)
}

/// Labels as [`label`] did before it matched by words: a candidate can match an annotation (other than a
/// Parties one) only where it overlaps the annotation's placed span. Kept for the negatives of
/// ACORD's clause classifier ([`crate::clause_classifier::ClassifierOptions::for_acord`]).
pub fn label_by_position(contract: &CuadContract, candidates: &[Candidate]) -> Labels {
    label_within(contract, candidates, true)
}

fn label_within(contract: &CuadContract, candidates: &[Candidate], by_position: bool) -> Labels {
    let text = &contract.text;
    let words: Vec<WordSet> = candidates
        .iter()
        .map(|c| WordSet::new(&text[c.span.clone()]))
        .collect();
    let mut candidate_bits = vec![0u64; candidates.len()];
    let mut annotation_hits = Vec::with_capacity(contract.annotations.len());
    for a in &contract.annotations {
        let gold = a.match_text();
        let gold_words = WordSet::new(&gold);
        let containment = substring_ok(a.category);
        let mut hits = Vec::new();
        for (i, c) in candidates.iter().enumerate() {
            let (n, gold_n) = (words[i].len(), gold_words.len());
            if !containment && (2 * n < gold_n || n > 2 * gold_n) {
                continue;
            }
            // The range from first to last piece, not each piece: a candidate between two
            // pieces must also match the words of all of them joined, which it almost never
            // does, and ACORD's clause classifier (whose negatives these labels choose) was
            // fitted with this rule.
            let overlaps = || {
                a.span
                    .as_ref()
                    .is_some_and(|s| s.start < c.span.end && c.span.start < s.end)
            };
            if by_position && !containment && !overlaps() {
                continue;
            }
            let candidate_text = &text[c.span.clone()];
            if span_matches(candidate_text, &words[i], &gold, &gold_words, containment) {
                hits.push(i as u32);
                candidate_bits[i] |= 1 << a.category;
            }
        }
        annotation_hits.push(hits);
    }
    Labels {
        candidate_bits,
        annotation_hits,
    }
}
