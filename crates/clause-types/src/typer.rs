//! The 41-category clause typer: one logistic regression per CUAD category over the sparse
//! features of candidate spans ([`crate::features`]), trained with AdaGrad SGD on the candidates
//! of annotated contracts, labelled by CUAD's own matching rule ([`crate::labels`]).
//!
//! Why this model: it trains on all 398 shared contracts (≈220k candidates) in well under a
//! minute on 2 cores, deterministically (fixed example order, no threads racing on weights), so it
//! can be refit inside every cross-validation fold and rebuilt by anyone from the data instead of
//! shipping a 40 MB weight file. MiniLM embeddings of every candidate would take about an hour to
//! compute on the same machine (≈30 clauses/s), too slow to refit per fold or to run in CI.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Result};
use precedent_ml::{fit_logistic, shuffled, sigmoid, Example, Sgd};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::candidates::{candidates, Candidate, Kind};
use crate::clause_classifier::ClauseClassifier;
use crate::dense::{candidate_vectors, embed_contract, SentenceEmbedder};
use crate::features::{candidate_features, Featurizer, SparseVec, DIM};
use crate::sections::Sections;
use crate::selection::{choose_with_novelty, Chosen, Selection};
use crate::stack::SecondStage;
use precedent_cuad::categories::CATEGORIES;

pub use crate::contract::{prepare, Prepared};
pub use precedent_clause_classifier::N_CATEGORIES;

/// Bumped whenever candidates, features or training change, so cached models are not reused.
pub const TYPER_VERSION: u32 = 3;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrainOptions {
    pub epochs: usize,
    pub learning_rate: f32,
    pub seed: u64,
    /// L2 penalty, applied as the clause classifier applies it: to the weights an example
    /// touches, when it touches them. Models saved before the field existed had none.
    #[serde(default)]
    pub l2: f32,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            epochs: 4,
            learning_rate: 0.3,
            seed: 42,
            // Confirmed on two fold assignments of the nested CV (docs/experiments/cuad-typer.md):
            // unregularised, the rare categories' weights chase single contracts and the second
            // stage has to undo it.
            l2: 1e-4,
        }
    }
}

/// What the model file records about how it was made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TyperInfo {
    pub version: u32,
    pub options: TrainOptions,
    pub contracts: usize,
    pub candidates: usize,
    pub positives: Vec<usize>,
    /// Caller-provided description of the training data (e.g. a content hash).
    pub data: String,
}

/// A candidate with its confidence for every category.
#[derive(Debug, Clone)]
pub struct ScoredCandidate {
    pub candidate: Candidate,
    pub scores: [f32; N_CATEGORIES],
}

pub struct ClauseTyper {
    featurizer: Featurizer,
    /// Category-major: `weights[k * DIM + i]`.
    weights: Vec<f32>,
    info: TyperInfo,
    /// Re-scores a contract's candidates from the first stage's view of the whole contract
    /// ([`crate::stack`]); `None` gives the first stage's own confidences.
    second_stage: Option<SecondStage>,
    /// The second stage's other evidence: what the single-clause classifier says of each
    /// candidate. Not part of the typer's file (it is its own cached model); without it the
    /// second stage cannot run and confidences are the first stage's. Shared: a server holds
    /// the same model as this typer's reader, as `classify`'s type gate and as the clause-type
    /// reader of queries.
    clause_classifier: Option<Arc<ClauseClassifier>>,
    /// Embeds a contract's sentences for a second stage that reads the sentence-embedding view
    /// ([`Self::set_sentence_embedder`]).
    sentence_embedder: Option<Arc<dyn SentenceEmbedder>>,
    /// The word-only second stage, kept beside a dense one for a contract whose sentences
    /// cannot be embedded (the review goes on, as it would without MiniLM).
    word_stage: Option<SecondStage>,
}

impl std::fmt::Debug for ClauseTyper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClauseTyper")
            .field("info", &self.info)
            .finish()
    }
}

impl ClauseTyper {
    /// Trains on prepared contracts. Deterministic for given data and options.
    pub fn train(prepared: &[&Prepared], options: &TrainOptions, data: &str) -> Self {
        let rows: Vec<(&SparseVec, u64)> = prepared
            .iter()
            .flat_map(|p| p.features.iter().zip(p.bits.iter().copied()))
            .collect();
        let order = shuffled(rows.len(), options.seed);
        let per_category: Vec<Vec<f32>> = (0..N_CATEGORIES)
            .into_par_iter()
            .map(|k| {
                let sgd = Sgd {
                    min_gradient: 1e-4,
                    ..Sgd::new(options.epochs, options.learning_rate, options.l2)
                };
                let (w, _) = fit_logistic(DIM, &order, &sgd, |r| {
                    let (x, bits) = rows[r];
                    Some(Example {
                        features: x
                            .indices
                            .iter()
                            .zip(&x.values)
                            .map(|(&i, &v)| (i as usize, v)),
                        label: (bits >> k) & 1 == 1,
                        weight: 1.0,
                    })
                });
                w
            })
            .collect();
        let positives = (0..N_CATEGORIES)
            .map(|k| rows.iter().filter(|(_, b)| (b >> k) & 1 == 1).count())
            .collect();
        ClauseTyper {
            featurizer: Featurizer::default(),
            weights: per_category.concat(),
            info: TyperInfo {
                version: TYPER_VERSION,
                options: options.clone(),
                contracts: prepared.len(),
                candidates: rows.len(),
                positives,
                data: data.to_owned(),
            },
            second_stage: Some(SecondStage::shipped()),
            clause_classifier: None,
            sentence_embedder: None,
            word_stage: None,
        }
    }

    /// Attaches the single-clause classifier the second stage reads (see the field's docs).
    pub fn with_clause_classifier(mut self, classifier: Option<Arc<ClauseClassifier>>) -> Self {
        self.clause_classifier = classifier;
        self
    }

    pub fn clause_classifier(&self) -> Option<&ClauseClassifier> {
        self.clause_classifier.as_deref()
    }

    /// The same first stage with another second stage (`None`: first-stage confidences only).
    /// A stage that reads the sentence-embedding view needs [`Self::set_sentence_embedder`].
    pub fn with_second_stage(mut self, second_stage: Option<SecondStage>) -> Self {
        self.second_stage = second_stage;
        self.word_stage = None;
        self
    }

    /// Reviews with the sentence-embedding view: the second stage becomes the shipped dense one
    /// ([`SecondStage::shipped_dense`]), which reads what a classifier over each candidate's
    /// MiniLM vector says besides the word features (nested CV, BENCHMARKS.md: +0.7 to +1.0
    /// precision at 80% recall), at the cost of embedding every sentence of the contract.
    /// Refuses an embedder other than the one the stage was fitted with, leaving the typer as
    /// it was.
    pub fn set_sentence_embedder(&mut self, embedder: Arc<dyn SentenceEmbedder>) -> Result<()> {
        let stage = SecondStage::shipped_dense();
        let Some(view) = &stage.dense else {
            bail!("the shipped dense second stage has no sentence-embedding view");
        };
        if view.model != embedder.model_id() || view.classifier.dim != embedder.dim() {
            bail!(
                "the dense second stage was fitted on {} vectors ({}-d); the sentence embedder is {} ({}-d)",
                view.model,
                view.classifier.dim,
                embedder.model_id(),
                embedder.dim()
            );
        }
        self.word_stage = self.second_stage.replace(stage);
        self.sentence_embedder = Some(embedder);
        Ok(())
    }

    /// Whether reviews read the sentence-embedding view.
    pub fn reads_sentence_embeddings(&self) -> bool {
        self.sentence_embedder.is_some()
            && self
                .second_stage
                .as_ref()
                .is_some_and(|s| s.dense.is_some())
    }

    pub fn second_stage(&self) -> Option<&SecondStage> {
        self.second_stage.as_ref()
    }

    pub fn info(&self) -> &TyperInfo {
        &self.info
    }

    /// First-stage logit of every category for one feature vector.
    pub fn logits(&self, x: &SparseVec) -> [f32; N_CATEGORIES] {
        let mut out = [0f32; N_CATEGORIES];
        for (k, o) in out.iter_mut().enumerate() {
            let w = &self.weights[k * DIM..(k + 1) * DIM];
            *o = x
                .indices
                .iter()
                .zip(&x.values)
                .map(|(&i, &v)| w[i as usize] * v)
                .sum();
        }
        out
    }

    /// First-stage confidence (probability) of every category for one feature vector.
    pub fn score(&self, x: &SparseVec) -> [f32; N_CATEGORIES] {
        self.logits(x).map(sigmoid)
    }

    /// Confidences of a contract's candidates from their first-stage logits: the second stage
    /// when there is one and the clause classifier it reads is attached (it needs the whole
    /// contract), else the first stage's sigmoid.
    pub fn contract_scores(
        &self,
        text: &str,
        candidates: &[Candidate],
        logits: &[[f32; N_CATEGORIES]],
    ) -> Vec<[f32; N_CATEGORIES]> {
        self.scored(text, candidates, logits).1
    }

    /// [`Self::contract_scores`] and the second stage that gave them (`None`: the first stage's
    /// own confidences), whose novelty step then applies.
    fn scored(
        &self,
        text: &str,
        candidates: &[Candidate],
        logits: &[[f32; N_CATEGORIES]],
    ) -> (Option<&SecondStage>, Vec<[f32; N_CATEGORIES]>) {
        let first_stage = || logits.iter().map(|l| l.map(sigmoid)).collect();
        let (Some(stage), Some(classifier)) = (&self.second_stage, &self.clause_classifier) else {
            return (None, first_stage());
        };
        let clause = classifier.candidate_logits(text, candidates);
        let sections = Sections::of(text, candidates);
        // The sentence-embedding classifier's logits, when the stage reads them.
        let dense = match (&stage.dense, &self.sentence_embedder) {
            (None, _) => Ok(None),
            (Some(view), Some(embedder)) => embed_contract(text, candidates, embedder.as_ref())
                .map(|sentences| {
                    let vectors = candidate_vectors(candidates, &sentences, view.classifier.dim);
                    Some(view.classifier.logits(&vectors))
                }),
            (Some(_), None) => Err(anyhow::anyhow!("no sentence embedder attached")),
        };
        // A contract MiniLM cannot read is reviewed as without it, not dropped.
        let (stage, dense) = match dense {
            Ok(dense) => (stage, dense),
            Err(e) => match &self.word_stage {
                Some(word) => {
                    tracing::warn!("reviewing with word features only: {e:#}");
                    (word, None)
                }
                None => return (None, first_stage()),
            },
        };
        let scores = stage.apply_dense(
            candidates,
            logits,
            Some(&clause),
            Some(&sections),
            dense.as_deref(),
        );
        (Some(stage), scores)
    }

    /// Every candidate span of a contract text with its confidence per category.
    pub fn review(&self, text: &str) -> Vec<ScoredCandidate> {
        let candidates = candidates(text);
        let logits: Vec<[f32; N_CATEGORIES]> = candidates
            .iter()
            .map(|c| self.logits(&candidate_features(&self.featurizer, text, c)))
            .collect();
        let scores = self.contract_scores(text, &candidates, &logits);
        candidates
            .into_iter()
            .zip(scores)
            .map(|(candidate, scores)| ScoredCandidate { candidate, scores })
            .collect()
    }

    /// A contract's findings per category, as `precedent review` lists them and CUAD's
    /// evaluation scores them: the candidates `selection` keeps from the second-stage confidences
    /// (near-duplicates dropped), re-scored by the novelty step when the second stage has one
    /// ([`crate::novelty`]: a repeat of what a more confident finding already says scores low).
    pub fn findings(&self, text: &str, selection: &Selection) -> (Vec<Candidate>, Vec<Chosen>) {
        let candidates = candidates(text);
        let logits: Vec<[f32; N_CATEGORIES]> = candidates
            .iter()
            .map(|c| self.logits(&candidate_features(&self.featurizer, text, c)))
            .collect();
        let (stage, scores) = self.scored(text, &candidates, &logits);
        let novelty = stage.and_then(|s| s.novelty.as_ref());
        let chosen = choose_with_novelty(text, &candidates, &scores, selection, novelty);
        (candidates, chosen)
    }

    /// First-stage logits of a prepared contract (features already computed).
    pub fn logits_prepared(&self, prepared: &Prepared) -> Vec<[f32; N_CATEGORIES]> {
        prepared.features.iter().map(|x| self.logits(x)).collect()
    }

    /// Scores a prepared contract (of `text`) as [`Self::review`] scores the text.
    pub fn score_prepared(&self, text: &str, prepared: &Prepared) -> Vec<[f32; N_CATEGORIES]> {
        self.contract_scores(text, &prepared.candidates, &self.logits_prepared(prepared))
    }

    /// Confidence per category for a clause on its own (no contract around it), highest first.
    /// The clause is treated as a sentence, a window or a paragraph by its length.
    pub fn classify(&self, text: &str) -> Vec<(&'static str, f32)> {
        let scores = self.classify_scores(text);
        let mut out: Vec<(&'static str, f32)> = CATEGORIES.iter().copied().zip(scores).collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }

    /// [`Self::classify`] in category order. First-stage confidences: a clause on its own has
    /// no contract around it for the second stage to look at.
    pub fn classify_scores(&self, text: &str) -> [f32; N_CATEGORIES] {
        let sentences = candidates(text)
            .iter()
            .filter(|c| c.kind == Kind::Sentence)
            .count();
        let kind = match sentences {
            0 | 1 => Kind::Sentence,
            2 => Kind::Window2,
            3 => Kind::Window3,
            _ => Kind::Paragraph,
        };
        let x = self.featurizer.features(text, kind, Some(text), None);
        self.score(&x)
    }

    const MAGIC: &'static [u8; 8] = b"PRTYPER1";

    /// Writes the model (magic, JSON info, little-endian f32 weights) atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        crate::model_file::save(path, Self::MAGIC, &self.info, self.weights.iter().copied())
    }

    pub fn load(path: &Path) -> Result<Self> {
        let (info, weights): (TyperInfo, Vec<f32>) =
            crate::model_file::load(path, Self::MAGIC, "clause typer")?;
        if info.version != TYPER_VERSION {
            bail!(
                "{}: model version {} but this build needs {TYPER_VERSION}; retrain it",
                path.display(),
                info.version
            );
        }
        if weights.len() != N_CATEGORIES * DIM {
            bail!(
                "{}: not a clause typer model (wrong weight count)",
                path.display()
            );
        }
        Ok(ClauseTyper {
            featurizer: Featurizer::default(),
            weights,
            info,
            second_stage: Some(SecondStage::shipped()),
            clause_classifier: None,
            sentence_embedder: None,
            word_stage: None,
        })
    }
}
