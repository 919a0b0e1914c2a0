//! Which scored candidates of a contract become the answers to each clause-type question: the
//! most confident candidates per category without heavy overlap, optionally re-scored by the
//! novelty step ([`crate::novelty`]). Review shows these; the CUAD harness scores them.

use serde::Serialize;

use precedent_metrics::spans::Question;

use crate::contract::Prepared;
use crate::novelty::{Novelty, NoveltyOptions, Ranked};
use crate::N_CATEGORIES;
use precedent_cuad::categories::substring_ok;
use precedent_cuad::dataset::CuadContract;

/// Which scored candidates of a (contract, category) become predictions.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    /// At most this many, most confident first (CUAD's evaluation uses 20).
    pub top_n: usize,
    /// Drop a candidate when its intersection-over-union with a more confident one already
    /// selected exceeds this (near-duplicates); `None` keeps overlapping candidates. IoU, not
    /// containment: a sentence inside a three-sentence window is kept next to the window, since
    /// CUAD's Jaccard >= 0.5 rule can credit only one of the two to a given annotation.
    pub max_overlap: Option<f64>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            top_n: 20,
            // Why IoU 0.5 rather than containment 0.9: on the nested 5-fold CV (two stages,
            // top 20) it keeps AUPR and doubles P@80R (docs/experiments/cuad-typer.md).
            max_overlap: Some(0.5),
        }
    }
}

/// Selects the predictions of one question from per-candidate confidences: indices into
/// `candidates`, most confident first.
pub fn select(
    candidates: &[crate::candidates::Candidate],
    confidence: impl Fn(usize) -> f32,
    selection: &Selection,
) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..candidates.len()).collect();
    ranked.sort_by(|&a, &b| confidence(b).total_cmp(&confidence(a)).then(a.cmp(&b)));
    let mut chosen: Vec<usize> = Vec::new();
    for i in ranked {
        if chosen.len() >= selection.top_n {
            break;
        }
        if let Some(max) = selection.max_overlap {
            let s = &candidates[i].span;
            let clash = chosen.iter().any(|&j| {
                let t = &candidates[j].span;
                let inter = s.end.min(t.end).saturating_sub(s.start.max(t.start));
                let union = s.end.max(t.end) - s.start.min(t.start);
                inter as f64 / union.max(1) as f64 > max
            });
            if clash {
                continue;
            }
        }
        chosen.push(i);
    }
    chosen
}

/// One question's predictions: candidate indices, most confident first by the score they were
/// selected by, and their confidences (after the novelty step, not necessarily descending).
#[derive(Debug, Clone, Default)]
pub struct Chosen {
    pub candidates: Vec<usize>,
    pub confidence: Vec<f32>,
}

/// Per contract and category, the selected predictions of per-candidate confidences.
pub fn choose(
    prepared: &[Prepared],
    scores: &[Vec<[f32; N_CATEGORIES]>],
    selection: &Selection,
) -> Vec<Vec<Chosen>> {
    prepared
        .iter()
        .zip(scores)
        .map(|(p, scores)| choose_one(&p.candidates, scores, selection))
        .collect()
}

/// Per category, the selected predictions of one contract.
pub(crate) fn choose_one(
    candidates: &[crate::candidates::Candidate],
    scores: &[[f32; N_CATEGORIES]],
    selection: &Selection,
) -> Vec<Chosen> {
    (0..N_CATEGORIES)
        .map(|k| {
            let candidates = select(candidates, |i| scores[i][k], selection);
            let confidence = candidates.iter().map(|&i| scores[i][k]).collect();
            Chosen {
                candidates,
                confidence,
            }
        })
        .collect()
}

/// What the novelty step (with `options`) re-scores of a question before `selection.top_n` are
/// kept ([`NoveltyOptions::pool`]).
pub fn novelty_pool(selection: &Selection, options: &NoveltyOptions) -> Selection {
    Selection {
        top_n: selection.top_n.max(options.pool),
        ..selection.clone()
    }
}

/// Per category, the predictions of one contract as CUAD scores them: `selection` from the
/// second-stage `scores`, or with a novelty step, its pool re-scored by it and the `top_n` most
/// likely new answers kept (most confident first).
pub fn choose_with_novelty(
    text: &str,
    candidates: &[crate::candidates::Candidate],
    scores: &[[f32; N_CATEGORIES]],
    selection: &Selection,
    novelty: Option<&Novelty>,
) -> Vec<Chosen> {
    let Some(novelty) = novelty else {
        return choose_one(candidates, scores, selection);
    };
    let mut chosen = choose_one(
        candidates,
        scores,
        &novelty_pool(selection, &novelty.options),
    );
    apply_novelty(novelty, text, candidates, &mut chosen);
    for c in &mut chosen {
        if c.candidates.len() > selection.top_n {
            let mut order: Vec<usize> = (0..c.candidates.len()).collect();
            order.sort_by(|&a, &b| c.confidence[b].total_cmp(&c.confidence[a]).then(a.cmp(&b)));
            order.truncate(selection.top_n);
            order.sort_unstable();
            c.candidates = order.iter().map(|&j| c.candidates[j]).collect();
            c.confidence = order.iter().map(|&j| c.confidence[j]).collect();
        }
    }
    chosen
}

/// Fits the novelty step ([`crate::novelty`]) on labelled contracts' predictions chosen by
/// second-stage `scores` (which must not come from a model that saw the contracts it will be
/// applied to).
pub fn train_novelty(
    contracts: &[&CuadContract],
    prepared: &[&Prepared],
    scores: &[Vec<[f32; N_CATEGORIES]>],
    selection: &Selection,
    options: &NoveltyOptions,
) -> Novelty {
    let pool = novelty_pool(selection, options);
    let owned: Vec<Vec<Chosen>> = prepared
        .iter()
        .zip(scores)
        .map(|(p, scores)| choose_one(&p.candidates, scores, &pool))
        .collect();
    let mut rows = Vec::new();
    for ((contract, p), chosen) in contracts.iter().zip(prepared).zip(&owned) {
        for (k, c) in chosen.iter().enumerate() {
            let predictions: Vec<(&str, f64)> = c
                .candidates
                .iter()
                .map(|&i| (&contract.text[p.candidates[i].span.clone()], 0.0))
                .collect();
            let gold: Vec<String> = contract.spans_of(k).map(|a| a.match_text()).collect();
            let gold: Vec<&str> = gold.iter().map(String::as_str).collect();
            let q = Question::matched(&gold, &predictions, substring_ok(k));
            rows.push((
                Ranked {
                    category: k,
                    text: &contract.text,
                    candidates: &p.candidates,
                    chosen: &c.candidates,
                    confidence: &c.confidence,
                },
                q.predictions.into_iter().map(|m| m.matches).collect(),
            ));
        }
    }
    Novelty::train(&rows, options)
}

/// Replaces chosen predictions' confidences (per category of one contract `text` with
/// `candidates`) by the novelty step's.
pub fn apply_novelty(
    novelty: &Novelty,
    text: &str,
    candidates: &[crate::candidates::Candidate],
    chosen: &mut [Chosen],
) {
    for (k, c) in chosen.iter_mut().enumerate() {
        c.confidence = novelty.apply(&Ranked {
            category: k,
            text,
            candidates,
            chosen: &c.candidates,
            confidence: &c.confidence,
        });
    }
}
