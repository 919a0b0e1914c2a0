//! Clause-category evidence: which kind of clause is this?
//!
//! Two sources, because each covers the other's blind spot:
//!
//! - [`CategoryClassifier`]: one logistic regression per ACORD category over the clause
//!   embedding, fitted from the ratings (two stars and up by a query of category C means "a C
//!   clause"; one star means "another category"). It generalises membership to clauses no
//!   training query of that category judged, and it backs the `--category` search filter.
//! - [`CuadTypeProfiles`]: one embedding centroid per CUAD clause type (41), from the spans that
//!   CUAD's annotators marked in 398 contracts. It needs no ratings at all, so it still speaks for
//!   queries of categories the ratings never cover (a "Third Party Beneficiary" search, say,
//!   when no training query is of that category): the query and the clause are compared by how
//!   they distribute over the CUAD types.

use precedent_ml::{sigmoid, Example, Optimizer, Sgd};
use serde::{Deserialize, Serialize};

use crate::memory::{dot, normalize, RatedQuery};

/// L2 penalty of the per-category logistic regressions (on unit-length embeddings).
const L2: f32 = 1e-3;
/// Full-batch gradient steps; the problem is small (about a thousand judged clauses per
/// category) and convex, so plain momentum descent converges well within this.
const STEPS: usize = 300;
const STEP_SIZE: f32 = 2.0;
const MOMENTUM: f32 = 0.9;

/// A per-category logistic regression over clause embeddings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CategoryClassifier {
    /// Category names, sorted (the same order as the rating memory's categories).
    pub categories: Vec<String>,
    /// One weight vector per category (`dim` long), then its bias.
    pub weights: Vec<Vec<f32>>,
    pub bias: Vec<f32>,
    /// Judged clauses each category was fitted on (positives, negatives), for the manifest.
    pub examples: Vec<(usize, usize)>,
}

impl CategoryClassifier {
    /// Fits from rated queries. `vector(row)` gives a clause's unit embedding. A clause is a
    /// positive example of C when some query of category C rated it two stars or more, a negative
    /// one when queries of C rated it only one star. Categories with no positive or no negative
    /// example get a classifier that always says 0.5 (no evidence either way).
    pub fn fit(
        categories: &[String],
        rated: &[&RatedQuery],
        dim: usize,
        vector: impl Fn(u32) -> Option<Vec<f32>>,
    ) -> CategoryClassifier {
        let mut weights = Vec::with_capacity(categories.len());
        let mut bias = Vec::with_capacity(categories.len());
        let mut examples = Vec::with_capacity(categories.len());
        for category in categories {
            let mut label: std::collections::BTreeMap<u32, bool> = Default::default();
            for q in rated
                .iter()
                .filter(|q| q.category.as_deref() == Some(category.as_str()))
            {
                for &(_, row, l) in &q.ratings {
                    let e = label.entry(row).or_insert(false);
                    *e |= l >= 1;
                }
            }
            let data: Vec<(Vec<f32>, f32)> = label
                .into_iter()
                .filter_map(|(row, pos)| vector(row).map(|v| (v, if pos { 1.0 } else { 0.0 })))
                .collect();
            let positives = data.iter().filter(|(_, y)| *y > 0.5).count();
            examples.push((positives, data.len() - positives));
            if positives == 0 || positives == data.len() {
                weights.push(vec![0.0; dim]);
                bias.push(0.0);
                continue;
            }
            let (w, b) = fit_logistic(&data, dim);
            weights.push(w);
            bias.push(b);
        }
        CategoryClassifier {
            categories: categories.to_vec(),
            weights,
            bias,
            examples,
        }
    }

    /// Probability that a clause with this unit embedding belongs to each category.
    pub fn probabilities(&self, v: &[f32]) -> Vec<f32> {
        self.weights
            .iter()
            .zip(&self.bias)
            .map(|(w, b)| sigmoid(dot(w, v) + b))
            .collect()
    }

    /// Index of a category by name, case-insensitively.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        let wanted = name.trim().to_lowercase();
        self.categories
            .iter()
            .position(|c| c.to_lowercase() == wanted)
    }
}

/// Class-balanced logistic regression by full-batch momentum gradient descent. Balanced because
/// a category has a few dozen positives among a thousand judged clauses; unweighted, the fit
/// would settle for "never this category".
fn fit_logistic(data: &[(Vec<f32>, f32)], dim: usize) -> (Vec<f32>, f32) {
    let n = data.len() as f32;
    let positives = data.iter().filter(|(_, y)| *y > 0.5).count() as f32;
    let w_pos = n / (2.0 * positives);
    let w_neg = n / (2.0 * (n - positives));
    let options = Sgd {
        bias: true,
        optimizer: Optimizer::Momentum { momentum: MOMENTUM },
        ..Sgd::new(STEPS, STEP_SIZE, L2)
    };
    let order: Vec<u32> = (0..data.len() as u32).collect();
    precedent_ml::fit_logistic(dim, &order, &options, |r| {
        let (x, y) = &data[r];
        let label = *y > 0.5;
        Some(Example {
            features: x.iter().copied().enumerate(),
            label,
            weight: if label { w_pos } else { w_neg },
        })
    })
}

/// Softmax temperature over cosines to the CUAD type centroids.
const TYPE_TEMPERATURE: f32 = 0.05;

/// One unit embedding centroid per CUAD clause type.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CuadTypeProfiles {
    pub names: Vec<String>,
    pub centroids: Vec<Vec<f32>>,
    /// Annotated spans averaged into each centroid.
    pub spans: Vec<usize>,
}

impl CuadTypeProfiles {
    /// Builds the centroids from `(type name, span embedding)` pairs; types keep first-seen order.
    pub fn from_examples<'a>(examples: impl IntoIterator<Item = (&'a str, &'a [f32])>) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut centroids: Vec<Vec<f32>> = Vec::new();
        let mut spans: Vec<usize> = Vec::new();
        for (name, v) in examples {
            let i = match names.iter().position(|n| n == name) {
                Some(i) => i,
                None => {
                    names.push(name.to_owned());
                    centroids.push(vec![0.0; v.len()]);
                    spans.push(0);
                    names.len() - 1
                }
            };
            centroids[i].iter_mut().zip(v).for_each(|(c, x)| *c += x);
            spans[i] += 1;
        }
        centroids.iter_mut().for_each(|c| normalize(c));
        CuadTypeProfiles {
            names,
            centroids,
            spans,
        }
    }

    /// How a text (by its unit embedding) distributes over the CUAD types: a softmax of its
    /// cosines to the centroids.
    pub fn distribution(&self, v: &[f32]) -> Vec<f32> {
        let cos: Vec<f32> = self.centroids.iter().map(|c| dot(c, v)).collect();
        let best = cos.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut p: Vec<f32> = cos
            .iter()
            .map(|c| ((c - best) / TYPE_TEMPERATURE).exp())
            .collect();
        let z: f32 = p.iter().sum();
        if z > 0.0 {
            p.iter_mut().for_each(|x| *x /= z);
        }
        p
    }
}

/// Spans shorter than this many words are names, dates or amounts ("Parties", "Agreement
/// Date"), not clause language, and would only blur a type's centroid.
const MIN_SPAN_WORDS: usize = 8;

/// Annotated CUAD spans to build [`CuadTypeProfiles`] from: `(type name, span text)`, at most
/// `per_type` per type, taken round-robin over the contracts (sorted by id) so that no single
/// contract's drafting style dominates a type. Deterministic.
pub fn cuad_type_examples(
    cuad_dir: &std::path::Path,
    per_type: usize,
) -> Result<Vec<(&'static str, String)>, crate::LearnError> {
    let data = precedent_cuad::load(cuad_dir).map_err(|e| {
        crate::LearnError::Invalid(format!("reading CUAD from {}: {e}", cuad_dir.display()))
    })?;
    let mut out = Vec::new();
    for (category, name) in precedent_cuad::CATEGORIES.iter().enumerate() {
        let per_contract: Vec<Vec<String>> = data
            .contracts
            .iter()
            .map(|c| {
                c.spans_of(category)
                    .map(|a| a.match_text())
                    .filter(|t| t.split_whitespace().count() >= MIN_SPAN_WORDS)
                    .collect()
            })
            .collect();
        let mut taken = 0;
        let mut depth = 0;
        while taken < per_type && per_contract.iter().any(|s| s.len() > depth) {
            for spans in &per_contract {
                if taken == per_type {
                    break;
                }
                if let Some(t) = spans.get(depth) {
                    out.push((*name, t.clone()));
                    taken += 1;
                }
            }
            depth += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let mut v = v.to_vec();
        normalize(&mut v);
        v
    }

    fn rated(category: &str, ratings: &[(u32, i32)]) -> RatedQuery {
        RatedQuery {
            id: format!("q-{category}"),
            text: String::new(),
            wording: String::new(),
            category: Some(category.into()),
            ratings: ratings
                .iter()
                .map(|&(row, l)| (format!("c{row}"), row, l))
                .collect(),
        }
    }

    #[test]
    fn classifier_separates_categories_and_generalises() {
        // Rows 0-3 lean on axis 0 (category A), rows 4-7 on axis 1 (category B).
        let vectors: Vec<Vec<f32>> = (0..8)
            .map(|i| {
                let noise = 0.1 * (i % 4) as f32;
                if i < 4 {
                    unit(&[1.0, noise, 0.2])
                } else {
                    unit(&[noise, 1.0, 0.2])
                }
            })
            .collect();
        let a = rated("A", &[(0, 2), (1, 1), (2, 3), (4, 0), (5, 0), (6, 0)]);
        let b = rated("B", &[(4, 1), (5, 4), (0, 0), (1, 0), (2, 0)]);
        let categories = vec!["A".to_string(), "B".to_string()];
        let clf = CategoryClassifier::fit(&categories, &[&a, &b], 3, |r| {
            vectors.get(r as usize).cloned()
        });
        assert_eq!(clf.examples, vec![(3, 3), (2, 3)]);
        // Rows 3 and 7 were never judged: their category is inferred.
        let p3 = clf.probabilities(&vectors[3]);
        let p7 = clf.probabilities(&vectors[7]);
        assert!(p3[0] > 0.8 && p3[1] < 0.2, "{p3:?}");
        assert!(p7[1] > 0.8 && p7[0] < 0.2, "{p7:?}");
        assert_eq!(clf.index_of(" a "), Some(0));
        assert_eq!(clf.index_of("C"), None);
    }

    #[test]
    fn category_without_negatives_gives_no_evidence() {
        let q = rated("A", &[(0, 2), (1, 3)]);
        let clf = CategoryClassifier::fit(&["A".to_string()], &[&q], 2, |_| Some(vec![1.0, 0.0]));
        assert_eq!(clf.probabilities(&[1.0, 0.0]), vec![0.5]);
    }

    #[test]
    fn type_profiles_distribute_by_similarity() {
        let x = unit(&[1.0, 0.0]);
        let x2 = unit(&[0.9, 0.1]);
        let y = unit(&[0.0, 1.0]);
        let profiles = CuadTypeProfiles::from_examples([
            ("Cap On Liability", x.as_slice()),
            ("Governing Law", y.as_slice()),
            ("Cap On Liability", x2.as_slice()),
        ]);
        assert_eq!(profiles.names, vec!["Cap On Liability", "Governing Law"]);
        assert_eq!(profiles.spans, vec![2, 1]);
        let d = profiles.distribution(&x);
        assert!((d.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(d[0] > 0.99, "{d:?}");
    }

    /// The fitted weights on a fixed random problem, bit for bit.
    #[test]
    fn fitting_is_pinned_bit_for_bit() {
        let mut rng = precedent_ml::SplitMix(5);
        let mut uniform = || (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let dim = 13;
        let vectors: Vec<Vec<f32>> = (0..60)
            .map(|_| unit(&(0..dim).map(|_| uniform()).collect::<Vec<f32>>()))
            .collect();
        let ratings = |axis: usize| -> Vec<(u32, i32)> {
            (0..60u32)
                .map(|r| {
                    (
                        r,
                        if vectors[r as usize][axis] > 0.15 {
                            2
                        } else {
                            0
                        },
                    )
                })
                .collect()
        };
        let a = rated("A", &ratings(0));
        let b = rated("B", &ratings(4));
        let categories = vec!["A".to_string(), "B".to_string()];
        let clf = CategoryClassifier::fit(&categories, &[&a, &b], dim, |r| {
            vectors.get(r as usize).cloned()
        });
        let fingerprint = clf
            .weights
            .iter()
            .flatten()
            .chain(&clf.bias)
            .fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
                (h ^ v.to_bits() as u64).wrapping_mul(0x100_0000_01b3)
            });
        assert_eq!(clf.examples, vec![(22, 38), (16, 44)]);
        assert_eq!(fingerprint, 0xe512_5ed6_477d_84dd);
    }
}
