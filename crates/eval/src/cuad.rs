//! `eval-cuad`: contract-level K-fold cross-validation of the typer on the shared CUAD contracts,
//! scored as the CUAD paper scores extractive models (see `precedent_metrics::spans`).
//!
//! Per fold the typer is refit on the other folds' contracts only; each held-out contract's
//! candidates are scored, and per category its most confident candidates become the
//! predictions (CUAD's evaluation uses the 20 best answers per question).
//!
//! The second stage ([`precedent_clause_types::stack`]) is fitted on out-of-fold first-stage logits, so it is
//! cross-validated by nesting: for outer fold `f`, every training contract (fold `g ≠ f`) is scored
//! by a first stage trained without folds `f` and `g`, the second stage is fitted on those scores,
//! and it re-scores fold `f`'s logits from the outer first stage (trained without `f`). One first
//! stage per pair of folds serves two outer folds, so 5 folds cost 10 + 5 first-stage fits, and no
//! label of a held-out contract reaches anything that scores it.

use std::time::Instant;

use anyhow::Context;
use precedent_ml::{round_robin_fold, sigmoid};
use rayon::prelude::*;
use serde::Serialize;

use precedent_metrics::spans::{Matching, PrCurve, Question};

use precedent_clause_types::clause_classifier::{
    training_examples, ClassifierOptions, ClauseClassifier, LabelledClause,
};
use precedent_clause_types::dense::{
    DenseClassifier, DenseOptions, SentenceCache, SentenceEmbedder,
};

pub mod sentence_cache;
use precedent_clause_types::novelty::{Novelty, NoveltyOptions};
use precedent_clause_types::selection::{
    choose, choose_with_novelty, train_novelty, Chosen, Selection,
};
use precedent_clause_types::stack::{DenseView, SecondStage, StackInput, StackOptions};
use precedent_clause_types::typer::{prepare, ClauseTyper, Prepared, TrainOptions, N_CATEGORIES};
use precedent_cuad::categories::{substring_ok, CATEGORIES};
use precedent_cuad::dataset::{CuadContract, CuadDataset};
use sentence_cache::cached_candidate_vectors;

#[derive(Debug, Clone, Serialize)]
pub struct CvOptions {
    pub folds: usize,
    pub selection: Selection,
    pub train: TrainOptions,
    /// Cross-validate the second stage too (`None`: first-stage confidences only).
    pub second_stage: Option<StackOptions>,
    /// With the second stage, also the novelty step after it (`None`: second-stage
    /// confidences).
    pub novelty: Option<NoveltyOptions>,
    /// With the second stage, its trees also read the sentence-embedding view (`None`: word
    /// features only).
    #[serde(skip)]
    pub dense: Option<DenseCv>,
}

/// The sentence-embedding view in a cross-validation: every contract's sentence vectors (in the
/// dataset's order), the model that made them, and the dense classifier's options. Its
/// classifier is nested like the clause classifier ([`fold_dense_logits`]).
#[derive(Debug, Clone)]
pub struct DenseCv {
    pub sentences: SentenceCache,
    /// The embedding model's full id, recorded in the fitted stage ([`DenseView::model`]).
    pub model: String,
    pub options: DenseOptions,
}

/// The CUAD questions (per category, one per contract) from out-of-fold confidences.
pub fn questions(
    contracts: &[&CuadContract],
    prepared: &[Prepared],
    scores: &[Vec<[f32; N_CATEGORIES]>],
    selection: &Selection,
) -> Vec<Vec<Question>> {
    questions_of(contracts, prepared, &choose(prepared, scores, selection))
}

/// The CUAD questions of chosen predictions.
pub fn questions_of(
    contracts: &[&CuadContract],
    prepared: &[Prepared],
    chosen: &[Vec<Chosen>],
) -> Vec<Vec<Question>> {
    let mut questions: Vec<Vec<Question>> = vec![Vec::new(); N_CATEGORIES];
    for ((contract, p), chosen) in contracts.iter().zip(prepared).zip(chosen) {
        for ((k, category_questions), c) in questions.iter_mut().enumerate().zip(chosen) {
            let predictions: Vec<(&str, f64)> = c
                .candidates
                .iter()
                .zip(&c.confidence)
                .map(|(&i, &s)| (&contract.text[p.candidates[i].span.clone()], f64::from(s)))
                .collect();
            let gold: Vec<String> = contract.spans_of(k).map(|a| a.match_text()).collect();
            let gold: Vec<&str> = gold.iter().map(String::as_str).collect();
            category_questions.push(Question::matched(&gold, &predictions, substring_ok(k)));
        }
    }
    questions
}

/// Held-out predictions from nested logits as [`stacked_scores`] makes them, then (with
/// `novelty`) re-scored by a novelty step fitted per outer fold on the training contracts'
/// predictions, chosen by that fold's second stage from their inner logits (the regime it was
/// trained in), so no held-out label reaches it either. Also returns the second-stage scores.
#[allow(clippy::too_many_arguments)]
pub fn stacked_novelty(
    contracts: &[&CuadContract],
    prepared: &[Prepared],
    logits: &FoldLogits,
    clause: Option<&FoldLogits>,
    folds: usize,
    options: &StackOptions,
    selection: &Selection,
    novelty: Option<&NoveltyOptions>,
) -> (Vec<Vec<Chosen>>, Vec<Vec<[f32; N_CATEGORIES]>>) {
    let (mut chosen, scores) = stacked_novelty_selections(
        contracts,
        prepared,
        logits,
        clause,
        None,
        folds,
        options,
        std::slice::from_ref(selection),
        novelty,
    );
    (chosen.pop().unwrap_or_default(), scores)
}

/// One list of `T` per contract.
pub type PerContract<T> = Vec<Vec<T>>;
/// Per candidate of one contract, a score per category.
pub type ContractScores = Vec<[f32; N_CATEGORIES]>;

/// [`stacked_novelty`] for several selections (e.g. top 20 and top 50) at once: the second
/// stages are fitted once per outer fold, the novelty step once per fold and selection. `dense`:
/// the sentence-embedding classifier's nested logits ([`fold_dense_logits`]) for the trees.
#[allow(clippy::too_many_arguments)]
pub fn stacked_novelty_selections(
    contracts: &[&CuadContract],
    prepared: &[Prepared],
    logits: &FoldLogits,
    clause: Option<&FoldLogits>,
    dense: Option<&FoldLogits>,
    folds: usize,
    options: &StackOptions,
    selections: &[Selection],
    novelty: Option<&NoveltyOptions>,
) -> (Vec<PerContract<Chosen>>, Vec<Vec<[f32; N_CATEGORIES]>>) {
    let variants: Vec<Option<&NoveltyOptions>> = vec![novelty];
    let (mut chosen, scores) = stacked_novelty_variants(
        contracts, prepared, logits, clause, dense, folds, options, selections, &variants,
    );
    (chosen.pop().unwrap_or_default(), scores)
}

/// [`stacked_novelty_selections`] for several novelty steps (`None`: none) compared on the same
/// second stages: the chosen predictions per novelty variant, then per selection.
#[allow(clippy::too_many_arguments)]
pub fn stacked_novelty_variants(
    contracts: &[&CuadContract],
    prepared: &[Prepared],
    logits: &FoldLogits,
    clause: Option<&FoldLogits>,
    dense: Option<&FoldLogits>,
    folds: usize,
    options: &StackOptions,
    selections: &[Selection],
    novelties: &[Option<&NoveltyOptions>],
) -> (Vec<Vec<PerContract<Chosen>>>, Vec<ContractScores>) {
    let fold_of = |i: usize| round_robin_fold(i, folds);
    let mut chosen =
        vec![vec![vec![Vec::new(); prepared.len()]; selections.len()]; novelties.len()];
    let mut scores = vec![Vec::new(); prepared.len()];
    for f in 0..folds {
        let training: Vec<usize> = (0..prepared.len())
            .filter(|&ci| fold_of(ci) != f && logits.inner[ci][f].is_some())
            .filter(|&ci| clause.is_none_or(|c| c.inner[ci][f].is_some()))
            .filter(|&ci| dense.is_none_or(|d| d.inner[ci][f].is_some()))
            .collect();
        let inputs: Vec<StackInput> = training
            .iter()
            .map(|&ci| StackInput {
                candidates: &prepared[ci].candidates,
                logits: logits.inner[ci][f].as_deref().unwrap_or(&[]),
                bits: &prepared[ci].bits,
                clause: clause.and_then(|c| c.inner[ci][f].as_deref()),
                sections: Some(&prepared[ci].sections),
                dense: dense.and_then(|d| d.inner[ci][f].as_deref()),
            })
            .collect();
        let stage = SecondStage::train(&inputs, options, &format!("cv outer fold {f}"));
        let train_scores = novelties
            .iter()
            .any(Option::is_some)
            .then(|| novelty_training_scores(&stage, &inputs));
        let training_contracts: Vec<&CuadContract> =
            training.iter().map(|&ci| contracts[ci]).collect();
        let training_prepared: Vec<&Prepared> = training.iter().map(|&ci| &prepared[ci]).collect();
        let models: Vec<Vec<Option<Novelty>>> = novelties
            .iter()
            .map(|novelty| {
                selections
                    .iter()
                    .map(|selection| {
                        novelty
                            .zip(train_scores.as_ref())
                            .map(|(novelty, train_scores)| {
                                train_novelty(
                                    &training_contracts,
                                    &training_prepared,
                                    train_scores,
                                    selection,
                                    novelty,
                                )
                            })
                    })
                    .collect()
            })
            .collect();
        for (ci, p) in prepared.iter().enumerate() {
            if fold_of(ci) == f {
                let c = clause.map(|c| c.outer[ci].as_slice());
                let d = dense.map(|d| d.outer[ci].as_slice());
                scores[ci] =
                    stage.apply_dense(&p.candidates, &logits.outer[ci], c, Some(&p.sections), d);
                for (models, chosen) in models.iter().zip(chosen.iter_mut()) {
                    for ((selection, model), chosen) in
                        selections.iter().zip(models).zip(chosen.iter_mut())
                    {
                        chosen[ci] = choose_with_novelty(
                            &contracts[ci].text,
                            &p.candidates,
                            &scores[ci],
                            selection,
                            model.as_ref(),
                        );
                    }
                }
            }
        }
    }
    (chosen, scores)
}

/// Second-stage scores of the training `inputs` for fitting the novelty step: in-sample from
/// `stage`, or, with trees and
/// [`TreeStage::novelty_folds`](precedent_clause_types::stack::TreeStage::novelty_folds) > 1, from stages cross-fitted on
/// the other folds of `inputs` (trees score their own training rows far more confidently than
/// new ones, and the novelty step should learn from scores like the ones it will re-rank).
pub fn novelty_training_scores(stage: &SecondStage, inputs: &[StackInput]) -> Vec<ContractScores> {
    let folds = stage.trees.as_ref().map_or(0, |t| t.stage.novelty_folds);
    if folds < 2 {
        return inputs
            .par_iter()
            .map(|i| stage.apply_dense(i.candidates, i.logits, i.clause, i.sections, i.dense))
            .collect();
    }
    let mut out = vec![Vec::new(); inputs.len()];
    for f in 0..folds {
        let train: Vec<StackInput> = inputs
            .iter()
            .enumerate()
            .filter(|&(j, _)| round_robin_fold(j, folds) != f)
            .map(|(_, &i)| i)
            .collect();
        let fitted = SecondStage::train(&train, &stage.options, &stage.data);
        let scored: Vec<(usize, ContractScores)> = inputs
            .par_iter()
            .enumerate()
            .filter(|&(j, _)| round_robin_fold(j, folds) == f)
            .map(|(j, i)| {
                (
                    j,
                    fitted.apply_dense(i.candidates, i.logits, i.clause, i.sections, i.dense),
                )
            })
            .collect();
        for (j, s) in scored {
            out[j] = s;
        }
    }
    out
}

impl Default for CvOptions {
    fn default() -> Self {
        CvOptions {
            folds: 5,
            selection: Selection::default(),
            train: TrainOptions::default(),
            second_stage: Some(StackOptions::default()),
            novelty: Some(NoveltyOptions::default()),
            dense: None,
        }
    }
}

/// AUPR and precision at 80% / 90% recall, as fractions.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct Scores {
    pub aupr: f64,
    pub precision_at_80_recall: f64,
    pub precision_at_90_recall: f64,
    /// Recall with every prediction kept (the end of the curve).
    pub max_recall: f64,
}

impl Scores {
    fn of(curve: &PrCurve) -> Self {
        Scores {
            aupr: curve.aupr(),
            precision_at_80_recall: curve.precision_at_recall(0.8),
            precision_at_90_recall: curve.precision_at_recall(0.9),
            max_recall: curve.recall.last().copied().unwrap_or(0.0),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CategoryScores {
    pub category: &'static str,
    pub annotations: usize,
    #[serde(flatten)]
    pub scores: Scores,
}

/// One held-out annotation scored by the fold's typer as a clause on its own (the LegalBench
/// development set is drawn from these).
#[derive(Debug, Clone)]
pub struct HeldOutClause {
    pub contract: usize,
    pub category: usize,
    pub text: String,
    pub scores: [f32; N_CATEGORIES],
}

#[derive(Debug, Clone, Serialize)]
pub struct CuadReport {
    pub contracts: usize,
    pub folds: usize,
    pub selection: Selection,
    pub train: TrainOptions,
    /// All questions pooled, CUAD's `evaluate.py` counting: the figure comparable to the paper.
    pub pooled: Scores,
    /// All questions pooled, one annotation per prediction (stricter).
    pub pooled_one_to_one: Scores,
    /// Mean over the 41 categories of the per-category scores.
    pub category_mean: Scores,
    pub per_category: Vec<CategoryScores>,
    /// Share of annotations some candidate matches (the ceiling on recall).
    pub candidate_recall: f64,
    pub candidates: usize,
    /// Mean seconds of one first-stage fit.
    pub train_seconds_per_fold: f64,
    #[serde(skip)]
    pub held_out_clauses: Vec<HeldOutClause>,
    /// Out-of-fold confidences per contract and candidate (for trying other selections).
    #[serde(skip)]
    pub out_of_fold: Vec<Vec<[f32; N_CATEGORIES]>>,
    /// The second stage fitted on the out-of-fold first-stage logits of all contracts (what
    /// ships as `second_stage.json`); `None` when the second stage is off.
    #[serde(skip)]
    pub second_stage: Option<SecondStage>,
    /// First-stage fits: one per outer fold plus, nested, one per pair of folds.
    pub first_stage_fits: usize,
    /// Single-clause classifier fits for the second stage's evidence (nested the same way).
    pub clause_classifier_fits: usize,
}

/// First-stage logits of every contract from typers that never saw it.
pub struct FoldLogits {
    /// Per contract: from the typer trained on all other folds.
    pub outer: Vec<Vec<[f32; N_CATEGORIES]>>,
    /// `inner[c][f]`, for each outer fold `f` other than contract `c`'s own: from the typer
    /// trained without folds `f` and `c`'s (empty when not nested).
    pub inner: Vec<Vec<Option<Vec<[f32; N_CATEGORIES]>>>>,
}

/// Fits the first stages of a (nested) cross-validation and collects their out-of-fold logits.
/// `on_outer(fold, typer)` sees each outer fold's typer; `progress(done, total)` counts fits.
pub fn fold_logits(
    prepared: &[Prepared],
    folds: usize,
    options: &TrainOptions,
    nested: bool,
    on_outer: impl FnMut(usize, &ClauseTyper),
    progress: impl FnMut(usize, usize),
) -> (FoldLogits, f64) {
    let fold_of = |i: usize| round_robin_fold(i, folds);
    let mut seconds = 0.0;
    let fit = |excluded: &[usize]| {
        let train: Vec<&Prepared> = prepared
            .iter()
            .enumerate()
            .filter(|(i, _)| !excluded.contains(&fold_of(*i)))
            .map(|(_, p)| p)
            .collect();
        let started = Instant::now();
        let typer = ClauseTyper::train(&train, options, &format!("cv without folds {excluded:?}"))
            .with_second_stage(None);
        seconds += started.elapsed().as_secs_f64();
        typer
    };
    let logits = nest(
        prepared.len(),
        folds,
        nested,
        fit,
        |typer: &ClauseTyper, ci| typer.logits_prepared(&prepared[ci]),
        on_outer,
        progress,
    );
    let total = folds + if nested { folds * (folds - 1) / 2 } else { 0 };
    (logits, seconds / total as f64)
}

/// The single-clause classifier's logits ([`ClauseClassifier::logits`]) of every candidate, with
/// the nesting of [`fold_logits`]: each contract is scored by classifiers trained on the
/// annotated spans of other contracts only (the outer one without its fold; the inner ones also
/// without the outer fold), so they can be second-stage evidence without leaking labels.
/// Trained on [`training_examples`] (with `options.unmatched_sentences`, the training contracts'
/// unmatched sentences too); `options.threshold_folds` is ignored (no threshold is used).
pub fn fold_clause_logits(
    contracts: &[&CuadContract],
    prepared: &[Prepared],
    folds: usize,
    options: &ClassifierOptions,
    progress: impl FnMut(usize, usize),
) -> anyhow::Result<FoldLogits> {
    let examples = training_examples(contracts, options);
    let options = ClassifierOptions {
        threshold_folds: 0,
        ..options.clone()
    };
    let mut failure = None;
    let fit = |excluded: &[usize]| {
        let train: Vec<LabelledClause> = examples
            .iter()
            .filter(|e| !excluded.contains(&round_robin_fold(e.group, folds)))
            .cloned()
            .collect();
        let model =
            ClauseClassifier::train(&train, &options, &format!("cv without folds {excluded:?}"));
        model.map_err(|e| failure = Some(e)).ok()
    };
    let logits = nest(
        prepared.len(),
        folds,
        true,
        fit,
        |model: &Option<ClauseClassifier>, ci| match model {
            Some(model) => model.candidate_logits(&contracts[ci].text, &prepared[ci].candidates),
            None => Vec::new(),
        },
        |_, _| {},
        progress,
    );
    match failure {
        Some(e) => Err(e),
        None => Ok(logits),
    }
}

/// The sentence-embedding classifier's logits ([`precedent_clause_types::dense`]) of every candidate, nested like
/// [`fold_clause_logits`]: each contract is scored by classifiers fitted on the candidates (and
/// their labels) of other contracts only. `vectors[c]`: contract `c`'s candidate vectors
/// ([`precedent_clause_types::dense::candidate_vectors`]), `dim` floats per candidate.
pub fn fold_dense_logits(
    prepared: &[Prepared],
    vectors: &[Vec<f32>],
    dim: usize,
    folds: usize,
    options: &DenseOptions,
    progress: impl FnMut(usize, usize),
) -> FoldLogits {
    let fit = |excluded: &[usize]| {
        let train: Vec<(&[f32], &[u64])> = prepared
            .iter()
            .zip(vectors)
            .enumerate()
            .filter(|&(ci, _)| !excluded.contains(&round_robin_fold(ci, folds)))
            .map(|(_, (p, v))| (v.as_slice(), p.bits.as_slice()))
            .collect();
        DenseClassifier::train(&train, dim, options)
    };
    nest(
        prepared.len(),
        folds,
        true,
        fit,
        |model: &DenseClassifier, ci| model.logits(&vectors[ci]),
        |_, _| {},
        progress,
    )
}

/// The dense classifier fitted on every contract's candidate vectors, with the embedding it
/// reads: the view a dense second stage carries and a review applies.
pub fn fit_dense_view(
    prepared: &[Prepared],
    vectors: &[Vec<f32>],
    dim: usize,
    max_tokens: usize,
    model: &str,
    options: &DenseOptions,
) -> DenseView {
    let train: Vec<(&[f32], &[u64])> = prepared
        .iter()
        .zip(vectors)
        .map(|(p, v)| (v.as_slice(), p.bits.as_slice()))
        .collect();
    DenseView {
        model: model.to_owned(),
        max_tokens,
        classifier: DenseClassifier::train(&train, dim, options),
    }
}

/// The fold structure shared by the nested cross-validations: `fit(excluded_folds)` makes a
/// model, `score(model, contract)` its per-candidate output for one contract. Per outer fold `f`
/// one model without `f` scores `f`'s contracts (`outer`); nested, one model per pair `{f, g}`
/// scores `f`'s contracts for outer fold `g` and `g`'s for `f` (`inner`).
fn nest<M>(
    n: usize,
    folds: usize,
    nested: bool,
    mut fit: impl FnMut(&[usize]) -> M,
    score: impl Fn(&M, usize) -> Vec<[f32; N_CATEGORIES]>,
    mut on_outer: impl FnMut(usize, &M),
    mut progress: impl FnMut(usize, usize),
) -> FoldLogits {
    let fold_of = |i: usize| round_robin_fold(i, folds);
    let total = folds + if nested { folds * (folds - 1) / 2 } else { 0 };
    let mut done = 0;
    let mut logits = FoldLogits {
        outer: vec![Vec::new(); n],
        inner: vec![vec![None; folds]; n],
    };
    for f in 0..folds {
        let model = fit(&[f]);
        for ci in (0..n).filter(|&ci| fold_of(ci) == f) {
            logits.outer[ci] = score(&model, ci);
        }
        on_outer(f, &model);
        done += 1;
        progress(done, total);
    }
    if nested {
        for f in 0..folds {
            for g in f + 1..folds {
                let model = fit(&[f, g]);
                for ci in 0..n {
                    if fold_of(ci) == f {
                        logits.inner[ci][g] = Some(score(&model, ci));
                    } else if fold_of(ci) == g {
                        logits.inner[ci][f] = Some(score(&model, ci));
                    }
                }
                done += 1;
                progress(done, total);
            }
        }
    }
    logits
}

/// Held-out confidences from nested logits: per outer fold, a second stage fitted on the inner
/// logits of the training contracts re-scores the fold's outer logits.
pub fn stacked_scores(
    prepared: &[Prepared],
    logits: &FoldLogits,
    clause: Option<&FoldLogits>,
    folds: usize,
    options: &StackOptions,
) -> Vec<Vec<[f32; N_CATEGORIES]>> {
    let fold_of = |i: usize| round_robin_fold(i, folds);
    let mut out = vec![Vec::new(); prepared.len()];
    for f in 0..folds {
        let inputs: Vec<StackInput> = prepared
            .iter()
            .enumerate()
            .filter(|(ci, _)| fold_of(*ci) != f)
            .filter_map(|(ci, p)| {
                let clause = match clause {
                    Some(c) => Some(c.inner[ci][f].as_deref()?),
                    None => None,
                };
                logits.inner[ci][f].as_ref().map(|l| StackInput {
                    candidates: &p.candidates,
                    logits: l,
                    bits: &p.bits,
                    clause,
                    sections: Some(&p.sections),
                    dense: None,
                })
            })
            .collect();
        let stage = SecondStage::train(&inputs, options, &format!("cv outer fold {f}"));
        for (ci, p) in prepared.iter().enumerate() {
            if fold_of(ci) == f {
                let clause = clause.map(|c| c.outer[ci].as_slice());
                out[ci] = stage.apply(&p.candidates, &logits.outer[ci], clause, Some(&p.sections));
            }
        }
    }
    out
}

/// Per-contract logits as confidences (the sigmoid of each), for scoring one model's
/// out-of-fold logits alone (the first stage, or a classifier as if it were one).
pub fn confidences(logits: &[Vec<[f32; N_CATEGORIES]>]) -> Vec<Vec<[f32; N_CATEGORIES]>> {
    logits
        .iter()
        .map(|c| c.iter().map(|l| l.map(sigmoid)).collect())
        .collect()
}

/// Pooled, one-to-one and per-category scores of a set of questions.
pub fn score_questions(
    questions: &[Vec<Question>],
) -> (Scores, Scores, Scores, Vec<CategoryScores>) {
    let all: Vec<&Question> = questions.iter().flatten().collect();
    let pooled = Scores::of(&PrCurve::from_questions(
        all.iter().copied(),
        Matching::Cuad,
    ));
    let pooled_one_to_one = Scores::of(&PrCurve::from_questions(
        all.iter().copied(),
        Matching::OneToOne,
    ));
    let per_category: Vec<CategoryScores> = questions
        .iter()
        .enumerate()
        .map(|(k, qs)| CategoryScores {
            category: CATEGORIES[k],
            annotations: qs.iter().map(|q| q.n_gold).sum(),
            scores: Scores::of(&PrCurve::from_questions(qs, Matching::Cuad)),
        })
        .collect();
    let n = per_category.len() as f64;
    let mean = |f: fn(&Scores) -> f64| per_category.iter().map(|c| f(&c.scores)).sum::<f64>() / n;
    let category_mean = Scores {
        aupr: mean(|s| s.aupr),
        precision_at_80_recall: mean(|s| s.precision_at_80_recall),
        precision_at_90_recall: mean(|s| s.precision_at_90_recall),
        max_recall: mean(|s| s.max_recall),
    };
    (pooled, pooled_one_to_one, category_mean, per_category)
}

/// Runs the cross-validation. `progress(done, total)` is called after each model fit (first
/// stages, then, with the second stage, the single-clause classifiers it reads). Fails only when
/// a training fold has no annotated span at all.
pub fn cross_validate(
    data: &CuadDataset,
    options: &CvOptions,
    mut progress: impl FnMut(usize, usize),
) -> anyhow::Result<CuadReport> {
    let contracts: Vec<&_> = data.contracts.iter().collect();
    let prepared = prepare(&contracts);
    // Nested, two folds would leave the inner first stages no training contract.
    let folds = options
        .folds
        .max(if options.second_stage.is_some() { 3 } else { 2 });
    let fold_of = |i: usize| round_robin_fold(i, folds);
    let nested = options.second_stage.is_some();
    let first_stage_fits = folds + if nested { folds * (folds - 1) / 2 } else { 0 };
    // The clause classifiers nest exactly as the first stages do, and so do the dense ones.
    let clause_classifier_fits = if nested { first_stage_fits } else { 0 };
    let dense_fits = if nested && options.dense.is_some() {
        first_stage_fits
    } else {
        0
    };
    let total_fits = first_stage_fits + clause_classifier_fits + dense_fits;
    // Every contract's candidate vectors, checked against the candidates they were made for.
    let dense_vectors: Option<Vec<Vec<f32>>> = match (&options.dense, nested) {
        (Some(d), true) => {
            anyhow::ensure!(
                d.sentences.contracts.len() == prepared.len(),
                "sentence vectors of {} contracts for {} contracts",
                d.sentences.contracts.len(),
                prepared.len()
            );
            let all = prepared
                .iter()
                .zip(&d.sentences.contracts)
                .enumerate()
                .map(|(ci, (p, s))| {
                    cached_candidate_vectors(&p.candidates, s, d.sentences.dim)
                        .with_context(|| format!("contract {ci}"))
                })
                .collect::<anyhow::Result<_>>()?;
            Some(all)
        }
        _ => None,
    };
    let mut held_out_clauses = Vec::new();
    let (logits, train_seconds_per_fold) = fold_logits(
        &prepared,
        folds,
        &options.train,
        options.second_stage.is_some(),
        |fold, typer| {
            for (ci, contract) in contracts.iter().enumerate() {
                if fold_of(ci) != fold {
                    continue;
                }
                for a in &contract.annotations {
                    let text = a.match_text();
                    held_out_clauses.push(HeldOutClause {
                        contract: ci,
                        category: a.category,
                        scores: typer.classify_scores(&text),
                        text,
                    });
                }
            }
        },
        |done, _| progress(done, total_fits),
    );
    let (chosen, out_of_fold, second_stage) = match &options.second_stage {
        Some(stack) => {
            let clause = fold_clause_logits(
                &contracts,
                &prepared,
                folds,
                &ClassifierOptions::for_second_stage(),
                |done, _| progress(first_stage_fits + done, total_fits),
            )?;
            let dense = match (&options.dense, &dense_vectors) {
                (Some(d), Some(vectors)) => Some(fold_dense_logits(
                    &prepared,
                    vectors,
                    d.sentences.dim,
                    folds,
                    &d.options,
                    |done, _| {
                        progress(first_stage_fits + clause_classifier_fits + done, total_fits)
                    },
                )),
                _ => None,
            };
            let (mut chosen, scores) = stacked_novelty_selections(
                &contracts,
                &prepared,
                &logits,
                Some(&clause),
                dense.as_ref(),
                folds,
                stack,
                std::slice::from_ref(&options.selection),
                options.novelty.as_ref(),
            );
            let chosen = chosen.pop().unwrap_or_default();
            let inputs: Vec<StackInput> = prepared
                .iter()
                .enumerate()
                .zip(&logits.outer)
                .zip(&clause.outer)
                .map(|(((ci, p), l), c)| StackInput {
                    candidates: &p.candidates,
                    logits: l,
                    bits: &p.bits,
                    clause: Some(c),
                    sections: Some(&p.sections),
                    dense: dense.as_ref().map(|d| d.outer[ci].as_slice()),
                })
                .collect();
            let mut all = SecondStage::train(
                &inputs,
                stack,
                &format!(
                    "out-of-fold first-stage and clause-classifier{} logits of {} CUAD contracts ({folds}-fold)",
                    if dense.is_some() { " and sentence-embedding classifier" } else { "" },
                    contracts.len()
                ),
            );
            // The view a review applies: the dense classifier refitted on every contract.
            if let (Some(d), Some(vectors)) = (&options.dense, &dense_vectors) {
                all.dense = Some(fit_dense_view(
                    &prepared,
                    vectors,
                    d.sentences.dim,
                    d.sentences.max_tokens,
                    &d.model,
                    &d.options,
                ));
            }
            if let Some(novelty) = &options.novelty {
                let all_scores = novelty_training_scores(&all, &inputs);
                let prepared: Vec<&Prepared> = prepared.iter().collect();
                all.novelty = Some(train_novelty(
                    &contracts,
                    &prepared,
                    &all_scores,
                    &options.selection,
                    novelty,
                ));
            }
            (chosen, scores, Some(all))
        }
        None => {
            let scores: Vec<Vec<[f32; N_CATEGORIES]>> = logits
                .outer
                .iter()
                .map(|c| c.iter().map(|l| l.map(sigmoid)).collect())
                .collect();
            (choose(&prepared, &scores, &options.selection), scores, None)
        }
    };
    let questions = questions_of(&contracts, &prepared, &chosen);
    let (pooled, pooled_one_to_one, category_mean, per_category) = score_questions(&questions);
    let (mut annotations, mut reachable) = (0usize, 0usize);
    for (c, p) in contracts.iter().zip(&prepared) {
        let labels = precedent_clause_types::labels::label(c, &p.candidates);
        annotations += labels.annotation_hits.len();
        reachable += labels
            .annotation_hits
            .iter()
            .filter(|h| !h.is_empty())
            .count();
    }
    Ok(CuadReport {
        contracts: contracts.len(),
        folds,
        selection: options.selection.clone(),
        train: options.train.clone(),
        pooled,
        pooled_one_to_one,
        category_mean,
        per_category,
        candidate_recall: reachable as f64 / annotations.max(1) as f64,
        candidates: prepared.iter().map(|p| p.candidates.len()).sum(),
        train_seconds_per_fold,
        held_out_clauses,
        out_of_fold,
        second_stage,
        first_stage_fits,
        clause_classifier_fits,
    })
}

/// The contracts' sentence vectors for `--dense`: from the cache when this data, model and
/// window were embedded before, else embedded now (with progress) and cached.
pub fn sentence_vectors(dir: &std::path::Path, data: &CuadDataset) -> anyhow::Result<DenseCv> {
    let embedder = precedent_engine::MiniLmSentences(
        precedent_models::Embedder::load_default()
            .context("--dense needs the MiniLM model (scripts/setup.sh installs it)")?,
    );
    let model = embedder.model_id().to_owned();
    let key = precedent_clause_types::cache::sentences_fingerprint(
        dir,
        &model,
        precedent_clause_types::dense::SENTENCE_MAX_TOKENS,
        data.contracts.len(),
    )?;
    let path =
        precedent_paths::state_path("cache/cuad-sentences").join(format!("sentences-{key}.bin"));
    let cached = path
        .is_file()
        .then(|| sentence_cache::load(&path))
        .and_then(|r| {
            r.map_err(|e| eprintln!("ignoring {}: {e:#}", path.display()))
                .ok()
        });
    let sentences = match cached {
        Some(s) => {
            eprintln!("sentence vectors from {}", path.display());
            s
        }
        None => {
            let candidates: Vec<_> = data
                .contracts
                .iter()
                .map(|c| precedent_clause_types::candidates::candidates(&c.text))
                .collect();
            let corpus: Vec<(&str, &[precedent_clause_types::candidates::Candidate])> = data
                .contracts
                .iter()
                .zip(&candidates)
                .map(|(c, cs)| (c.text.as_str(), cs.as_slice()))
                .collect();
            let started = Instant::now();
            let s = precedent_clause_types::dense::embed_corpus(
                &corpus,
                &embedder,
                precedent_clause_types::dense::SENTENCE_MAX_TOKENS,
                |done, total| {
                    eprintln!(
                        "embedding sentences: {done}/{total} ({:.0}s)",
                        started.elapsed().as_secs_f64()
                    )
                },
            )?;
            sentence_cache::save(&s, &path)?;
            eprintln!("sentence vectors cached in {}", path.display());
            s
        }
    };
    Ok(DenseCv {
        sentences,
        model,
        options: DenseOptions::default(),
    })
}
