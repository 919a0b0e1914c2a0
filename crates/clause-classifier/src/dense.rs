//! A semantic view of the candidates for the second stage: sentence-embedding vectors (MiniLM,
//! computed outside this crate) and a per-category logistic regression over them.
//!
//! Why: every other signal of the typer is bag-of-words, and the false positives left at 80%
//! recall are other clauses sharing a category's vocabulary. An embedding sees paraphrase and
//! word order the hashed n-grams do not, so its per-category logit may separate "a clause about
//! exclusivity" from "a clause using the word exclusive".
//!
//! Only sentence candidates are embedded (a contract has ~549 candidates, of which the sentences
//! are a minority, and the transformer is the cost): every other candidate gets the normalised
//! mean of the vectors of the sentences its span overlaps (windows, paragraphs, titles), or of
//! the sentence it sits in (pieces, dates).

use std::collections::HashMap;

use anyhow::{ensure, Result};
use precedent_ml::{fit_logistics, shuffled, Dense, Optimizer, Order, Sgd};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::candidates::{Candidate, Kind};
use crate::N_CATEGORIES;

/// The token window sentences are embedded with, special tokens included: the window the shipped
/// dense second stage was fitted with (4.6% of CUAD's sentences are longer and cut).
pub const SENTENCE_MAX_TOKENS: usize = 128;

/// Sentence embeddings for the dense view, computed outside this crate (the CLI wraps MiniLM), so
/// that the typer carries no model code and a test can pass any embedder.
pub trait SentenceEmbedder: Send + Sync {
    /// Unit vectors of `texts`, in order, [`Self::dim`] floats each, each text cut to
    /// [`SENTENCE_MAX_TOKENS`] tokens.
    fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    fn dim(&self) -> usize;
    /// The model's name, checked against the one the dense second stage was fitted on.
    fn model_id(&self) -> &str;
}

/// The vectors of a contract's sentence candidates, each distinct sentence embedded once
/// (boilerplate repeats within a contract).
pub fn embed_contract(
    text: &str,
    candidates: &[Candidate],
    embedder: &dyn SentenceEmbedder,
) -> Result<SentenceVectors> {
    let mut corpus = embed_corpus(
        &[(text, candidates)],
        embedder,
        SENTENCE_MAX_TOKENS,
        |_, _| {},
    )?;
    Ok(corpus.contracts.pop().unwrap_or_default())
}

/// The embedded sentences of one contract: candidate indices (of [`Kind::Sentence`] candidates)
/// and their vectors, `dim` floats each, in the same order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SentenceVectors {
    pub candidates: usize,
    pub indices: Vec<u32>,
    pub vectors: Vec<f32>,
}

/// Sentence vectors of a corpus of contracts (`precedent_eval` caches them on disk for the
/// cross-validations).
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceCache {
    pub dim: usize,
    /// Model window the sentences were truncated to (special tokens included).
    pub max_tokens: usize,
    pub contracts: Vec<SentenceVectors>,
}

/// Sentence vectors of a corpus of contracts (`(text, candidates)` each), every distinct sentence
/// embedded once across the corpus (boilerplate repeats between contracts), in chunks so that
/// `progress(done, total)` can report on a run that takes half an hour for CUAD.
pub fn embed_corpus(
    contracts: &[(&str, &[Candidate])],
    embedder: &dyn SentenceEmbedder,
    max_tokens: usize,
    progress: impl FnMut(usize, usize),
) -> Result<SentenceCache> {
    let mut distinct: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut rows: Vec<(Vec<u32>, Vec<usize>)> = Vec::with_capacity(contracts.len());
    for (text, candidates) in contracts {
        let indices = sentence_indices(candidates);
        let slots = indices
            .iter()
            .map(|&i| {
                let s = text.get(candidates[i as usize].span.clone()).unwrap_or("");
                *distinct.entry(s).or_insert_with(|| {
                    texts.push(s);
                    texts.len() - 1
                })
            })
            .collect();
        rows.push((indices, slots));
    }
    let dim = embedder.dim();
    let vectors = embed_in_chunks(&texts, embedder, progress)?;
    Ok(SentenceCache {
        dim,
        max_tokens,
        contracts: contracts
            .iter()
            .zip(rows)
            .map(|((_, candidates), (indices, slots))| SentenceVectors {
                candidates: candidates.len(),
                indices,
                vectors: slots
                    .iter()
                    .flat_map(|&r| vectors[r].iter().copied())
                    .collect(),
            })
            .collect(),
    })
}

/// The vectors of `texts` in order, embedded in chunks so that `progress(done, total)` can
/// report (and one call's memory stays bounded; the embedder batches inside), each checked to
/// have [`SentenceEmbedder::dim`] floats.
pub fn embed_in_chunks(
    texts: &[&str],
    embedder: &dyn SentenceEmbedder,
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<Vec<f32>>> {
    const CHUNK: usize = 2048;
    let dim = embedder.dim();
    let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
    progress(0, texts.len());
    for chunk in texts.chunks(CHUNK) {
        let v = embedder.embed_sentences(chunk)?;
        ensure!(
            v.len() == chunk.len() && v.iter().all(|x| x.len() == dim),
            "the sentence embedder returned {} vectors for {} texts (expected {dim} floats each)",
            v.len(),
            chunk.len()
        );
        vectors.extend(v);
        progress(vectors.len(), texts.len());
    }
    Ok(vectors)
}

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Every candidate's vector (`candidates.len() * dim` floats, row per candidate) from the
/// vectors of the contract's sentence candidates: a sentence keeps its own; any other candidate
/// gets the normalised mean of the sentences its span overlaps, or of those overlapping its
/// context when its span overlaps none (a title between sentences); zeros when there is none.
pub fn candidate_vectors(
    candidates: &[Candidate],
    sentences: &SentenceVectors,
    dim: usize,
) -> Vec<f32> {
    // Sentence spans sorted by start (they do not overlap one another), with their rows.
    let mut spans: Vec<(usize, usize, usize)> = sentences
        .indices
        .iter()
        .enumerate()
        .filter_map(|(row, &ci)| {
            let c = candidates.get(ci as usize)?;
            Some((c.span.start, c.span.end, row))
        })
        .collect();
    spans.sort_unstable();
    let overlapping = |start: usize, end: usize| {
        let first = spans.partition_point(|s| s.1 <= start);
        spans[first..]
            .iter()
            .take_while(move |s| s.0 < end)
            .map(|s| s.2)
    };
    let mut out = vec![0f32; candidates.len() * dim];
    let mut own = vec![None; candidates.len()];
    for (row, &ci) in sentences.indices.iter().enumerate() {
        if let Some(o) = own.get_mut(ci as usize) {
            *o = Some(row);
        }
    }
    out.par_chunks_mut(dim.max(1))
        .zip(candidates.par_iter())
        .zip(own.par_iter())
        .for_each(|((v, c), own)| {
            if let Some(row) = own {
                v.copy_from_slice(&sentences.vectors[row * dim..(row + 1) * dim]);
                return;
            }
            let mut n = 0;
            for row in overlapping(c.span.start, c.span.end) {
                n += 1;
                v.iter_mut()
                    .zip(&sentences.vectors[row * dim..(row + 1) * dim])
                    .for_each(|(a, b)| *a += b);
            }
            if n == 0 {
                for row in overlapping(c.context.start, c.context.end.max(c.context.start + 1)) {
                    v.iter_mut()
                        .zip(&sentences.vectors[row * dim..(row + 1) * dim])
                        .for_each(|(a, b)| *a += b);
                }
            }
            normalize(v);
        });
    out
}

/// The sentence candidates whose text a contract's vectors are made of.
pub fn sentence_indices(candidates: &[Candidate]) -> Vec<u32> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == Kind::Sentence)
        .map(|(i, _)| i as u32)
        .collect()
}

/// Fitting options of [`DenseClassifier`].
#[derive(Debug, Clone, PartialEq)]
pub struct DenseOptions {
    pub epochs: usize,
    pub learning_rate: f32,
    /// L2 penalty on the weights (not the bias), per example seen, scaled by the learning rate.
    pub l2: f32,
    /// Weight of a positive example: candidates matching a category are ~0.1-1% of all, and
    /// without some up-weighting the weights stay near zero for the rare categories.
    pub positive_weight: f32,
    pub seed: u64,
}

impl Default for DenseOptions {
    fn default() -> Self {
        // 8 epochs at 0.1: the classifier alone 36.6 pooled AUPR against 34.3 for 4 at 0.05
        // (nested CV, BENCHMARKS.md); the shipped dense second stage reads these logits.
        DenseOptions {
            epochs: 8,
            learning_rate: 0.1,
            l2: 1e-5,
            positive_weight: 5.0,
            seed: 42,
        }
    }
}

/// One logistic regression per category over a candidate's embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DenseClassifier {
    pub dim: usize,
    /// The training rows' mean vector, subtracted before the weights: sentence embeddings share
    /// a large common direction, and centring them makes SGD converge in a few epochs.
    pub mean: Vec<f32>,
    /// `N_CATEGORIES` rows of `dim` weights.
    pub weights: Vec<f32>,
    /// `N_CATEGORIES` biases.
    pub bias: Vec<f32>,
}

/// Categories fitted together in one pass over the rows (a row's vector stays in cache while
/// they update); the groups run in parallel.
const CATEGORY_GROUP: usize = 7;

impl DenseClassifier {
    /// Fits on `(vectors, bits)` of the training contracts: rows of `dim` floats and per row the
    /// categories it matches. Plain SGD with a linearly decaying rate over a fixed shuffle per
    /// epoch: the data are dense, centred and of unit scale, so nothing fancier is needed.
    pub fn train(data: &[(&[f32], &[u64])], dim: usize, options: &DenseOptions) -> Self {
        let n: usize = data.iter().map(|(_, b)| b.len()).sum();
        let mut mean = vec![0f32; dim];
        for (vectors, _) in data {
            for x in vectors.chunks_exact(dim.max(1)) {
                mean.iter_mut().zip(x).for_each(|(m, v)| *m += v);
            }
        }
        mean.iter_mut().for_each(|m| *m /= n.max(1) as f32);
        let mut rows: Vec<(u32, u32)> = Vec::with_capacity(n);
        for (ci, (_, bits)) in data.iter().enumerate() {
            rows.extend((0..bits.len() as u32).map(|r| (ci as u32, r)));
        }
        let order: Vec<Vec<u32>> = (0..options.epochs as u64)
            .map(|e| shuffled(rows.len(), options.seed.wrapping_add(e)))
            .collect();
        let groups: Vec<(usize, usize)> = (0..N_CATEGORIES)
            .step_by(CATEGORY_GROUP)
            .map(|k| (k, (k + CATEGORY_GROUP).min(N_CATEGORIES)))
            .collect();
        let sgd = Sgd {
            bias: true,
            // Linear decay to a tenth of the rate: SGD settles without a schedule.
            optimizer: Optimizer::Sgd { decay: 0.9 },
            ..Sgd::new(options.epochs, options.learning_rate, options.l2)
        };
        let fitted: Vec<(Vec<f32>, Vec<f32>)> = groups
            .par_iter()
            .map(|&(from, to)| {
                // Start from the (weighted) base rates so early updates do not go to the bias.
                let bias: Vec<f32> = (from..to)
                    .map(|k| {
                        let pos = data
                            .iter()
                            .flat_map(|(_, bits)| bits.iter())
                            .filter(|&&x| x >> k & 1 == 1)
                            .count() as f32;
                        let w = options.positive_weight * pos;
                        let rate =
                            ((w + 0.5) / (w + (n as f32 - pos) + 1.0)).clamp(1e-6, 1.0 - 1e-6);
                        (rate / (1.0 - rate)).ln()
                    })
                    .collect();
                let fitted =
                    fit_logistics(dim, to - from, Order::PerEpoch(&order), &sgd, &bias, |i| {
                        let (ci, r) = rows[i];
                        let (vectors, bits) = data[ci as usize];
                        let r = r as usize;
                        let x: Vec<f32> = vectors[r * dim..(r + 1) * dim]
                            .iter()
                            .zip(&mean)
                            .map(|(v, m)| v - m)
                            .collect();
                        let y = bits[r];
                        Some((Dense(x), move |j: usize| {
                            if y >> (from + j) & 1 == 1 {
                                (true, options.positive_weight)
                            } else {
                                (false, 1.0)
                            }
                        }))
                    });
                let mut weights = Vec::with_capacity((to - from) * dim);
                let mut bias = Vec::with_capacity(to - from);
                for (w, b) in fitted {
                    weights.extend(w);
                    bias.push(b);
                }
                (weights, bias)
            })
            .collect();
        let mut weights = Vec::with_capacity(N_CATEGORIES * dim);
        let mut bias = vec![0f32; N_CATEGORIES];
        for (&(from, _), (w, b)) in groups.iter().zip(fitted) {
            weights.extend(w);
            bias[from..from + b.len()].copy_from_slice(&b);
        }
        DenseClassifier {
            dim,
            mean,
            weights,
            bias,
        }
    }

    /// Checks the shapes a deserialised classifier must have (a shipped or passed file).
    pub fn validate(&self) -> Result<()> {
        ensure!(
            self.dim > 0
                && self.mean.len() == self.dim
                && self.weights.len() == N_CATEGORIES * self.dim
                && self.bias.len() == N_CATEGORIES,
            "dense classifier with {} means, {} weights and {} biases for {}-d vectors and {N_CATEGORIES} categories",
            self.mean.len(),
            self.weights.len(),
            self.bias.len(),
            self.dim
        );
        Ok(())
    }

    /// Per-category logits of each row of `vectors`.
    pub fn logits(&self, vectors: &[f32]) -> Vec<[f32; N_CATEGORIES]> {
        vectors
            .par_chunks(self.dim.max(1))
            .map(|v| self.row_logits(v))
            .collect()
    }

    /// Per-category logits of one vector (callers already parallel over rows use this).
    pub fn row_logits(&self, v: &[f32]) -> [f32; N_CATEGORIES] {
        let x: Vec<f32> = v.iter().zip(&self.mean).map(|(v, m)| v - m).collect();
        let mut out = [0f32; N_CATEGORIES];
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.bias[k] + dot(&self.weights[k * self.dim..(k + 1) * self.dim], &x);
        }
        out
    }
}

pub(crate) use precedent_ml::dot;

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(kind: Kind, start: usize, end: usize) -> Candidate {
        Candidate {
            kind,
            span: start..end,
            context: start..end,
        }
    }

    #[test]
    fn windows_average_their_sentences_and_pieces_take_theirs() {
        let candidates = vec![
            cand(Kind::Sentence, 0, 10),
            cand(Kind::Sentence, 11, 20),
            cand(Kind::Window2, 0, 20),
            Candidate {
                kind: Kind::Piece,
                span: 12..15,
                context: 11..20,
            },
            cand(Kind::Title, 30, 35),
        ];
        let s = SentenceVectors {
            candidates: 5,
            indices: vec![0, 1],
            vectors: vec![1.0, 0.0, 0.0, 1.0],
        };
        let v = candidate_vectors(&candidates, &s, 2);
        assert_eq!(&v[0..2], &[1.0, 0.0]);
        assert_eq!(&v[2..4], &[0.0, 1.0]);
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!((v[4] - h).abs() < 1e-6 && (v[5] - h).abs() < 1e-6);
        assert_eq!(&v[6..8], &[0.0, 1.0]);
        assert_eq!(&v[8..10], &[0.0, 0.0]);
    }

    /// Embeds a text as the counts of a few letters (enough to check the plumbing).
    struct Letters;

    impl SentenceEmbedder for Letters {
        fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v: Vec<f32> = ['a', 'e', 'o']
                        .iter()
                        .map(|&c| t.matches(c).count() as f32)
                        .collect();
                    normalize(&mut v);
                    v
                })
                .collect())
        }
        fn dim(&self) -> usize {
            3
        }
        fn model_id(&self) -> &str {
            "letters"
        }
    }

    #[test]
    fn a_contract_embeds_each_distinct_sentence_once() {
        let text = "The fee is due. The fee is due. Notice goes to Ann.";
        let candidates = crate::candidates::candidates(text);
        let s = embed_contract(text, &candidates, &Letters).expect("embed");
        assert_eq!(s.candidates, candidates.len());
        assert!(s.indices.len() >= 2, "{:?}", s.indices);
        assert_eq!(s.vectors.len(), s.indices.len() * 3);
        // The repeated sentence gets the same vector.
        let first = &s.vectors[0..3];
        assert_eq!(first, &s.vectors[3..6]);
        assert!(first.iter().any(|&x| x > 0.0));
    }

    #[test]
    fn a_corpus_embeds_each_distinct_sentence_once() {
        /// Counts the texts it is asked to embed.
        struct Counting(std::sync::atomic::AtomicUsize);
        impl SentenceEmbedder for Counting {
            fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
                self.0
                    .fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
                Letters.embed_sentences(texts)
            }
            fn dim(&self) -> usize {
                3
            }
            fn model_id(&self) -> &str {
                "counting"
            }
        }
        let a = "The fee is due. Notice goes to Ann.";
        let b = "Notice goes to Ann. All else is void.";
        let (ca, cb) = (
            crate::candidates::candidates(a),
            crate::candidates::candidates(b),
        );
        let embedder = Counting(Default::default());
        let mut reported = Vec::new();
        let cache = embed_corpus(
            &[(a, ca.as_slice()), (b, cb.as_slice())],
            &embedder,
            SENTENCE_MAX_TOKENS,
            |done, total| reported.push((done, total)),
        )
        .expect("embed");
        let sentences: usize = cache.contracts.iter().map(|c| c.indices.len()).sum();
        let embedded = embedder.0.load(std::sync::atomic::Ordering::Relaxed);
        assert!(embedded < sentences, "{embedded} embedded for {sentences}");
        assert_eq!(reported.last(), Some(&(embedded, embedded)));
        // The same vectors as one contract embedded on its own.
        let alone = embed_contract(b, &cb, &Letters).expect("embed");
        assert_eq!(cache.contracts[1], alone);
    }

    #[test]
    fn a_classifier_round_trips_through_json_and_refuses_bad_shapes() {
        let m = DenseClassifier {
            dim: 2,
            mean: vec![0.1, 0.2],
            weights: vec![0.5; N_CATEGORIES * 2],
            bias: vec![-1.0; N_CATEGORIES],
        };
        m.validate().expect("valid");
        let back: DenseClassifier =
            serde_json::from_str(&serde_json::to_string(&m).expect("json")).expect("parse");
        assert_eq!(back, m);
        let bad = DenseClassifier {
            weights: vec![0.5; 3],
            ..m
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn learns_a_separable_category() {
        // Category 3 is the first coordinate's sign.
        let mut vectors = Vec::new();
        let mut bits = Vec::new();
        for i in 0..400 {
            let a = (i as f32 * 0.37).sin();
            let b = (i as f32 * 0.11).cos();
            let n = (a * a + b * b).sqrt().max(1e-3);
            vectors.extend([a / n, b / n]);
            bits.push(if a > 0.2 { 1u64 << 3 } else { 0 });
        }
        // Few rows: more epochs, and no up-weighting (it would move the decision point).
        let options = DenseOptions {
            epochs: 40,
            learning_rate: 0.5,
            positive_weight: 1.0,
            ..DenseOptions::default()
        };
        let m = DenseClassifier::train(&[(&vectors, &bits)], 2, &options);
        let l = m.logits(&vectors);
        let right = l
            .iter()
            .zip(&bits)
            .filter(|(l, &b)| (l[3] > 0.0) == (b != 0))
            .count();
        assert!(right > 360, "{right} of 400");
    }

    /// The fitted weights and biases on a fixed random problem, bit for bit: training must stay
    /// a deterministic function of its data and options (a cached model is checked against it).
    #[test]
    fn training_is_pinned_bit_for_bit() {
        let mut rng = precedent_ml::SplitMix(11);
        let mut uniform = || (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let dim = 19;
        let contracts: Vec<(Vec<f32>, Vec<u64>)> = (0..3)
            .map(|c| {
                let rows = 30 + 7 * c;
                let vectors: Vec<f32> = (0..rows * dim).map(|_| uniform()).collect();
                let bits = (0..rows)
                    .map(|r| {
                        let x = &vectors[r * dim..(r + 1) * dim];
                        (0..N_CATEGORIES).fold(0u64, |acc, k| {
                            acc | (((x[k % dim] + 0.3 * x[(k + 5) % dim] > 0.25) as u64) << k)
                        })
                    })
                    .collect();
                (vectors, bits)
            })
            .collect();
        let data: Vec<(&[f32], &[u64])> = contracts
            .iter()
            .map(|(v, b)| (v.as_slice(), b.as_slice()))
            .collect();
        let options = DenseOptions {
            epochs: 3,
            ..DenseOptions::default()
        };
        let m = DenseClassifier::train(&data, dim, &options);
        let fingerprint = m
            .weights
            .iter()
            .chain(&m.bias)
            .chain(&m.mean)
            .fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
                (h ^ v.to_bits() as u64).wrapping_mul(0x100_0000_01b3)
            });
        assert_eq!(fingerprint, 0x9090_9bb5_47c5_4d0d);
    }
}
