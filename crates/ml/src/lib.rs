//! The machine-learning primitives Precedent's models share, one implementation each.
//!
//! - [`sigmoid`], the logistic function.
//! - [`SplitMix`] and [`shuffled`]: the seeded generator and permutation behind every training
//!   order and every shuffled fold assignment, the same on every machine.
//! - Fold assignment ([`round_robin_fold`], [`group_folds`], [`block_folds`]): which rows a
//!   cross-validation holds out together.
//! - [`fit_logistic`]: logistic regression over sparse features by AdaGrad SGD. The clause
//!   typer, the single-clause classifier, the typer's second stage and its novelty step are all
//!   trained this way, in a fixed, seeded example order, so that a model is a deterministic
//!   function of its data and options (a cached model can be checked against the data it claims
//!   to come from).
//! - [`boost`]: gradient-boosted regression trees (log loss or pairwise loss, histogram splits),
//!   the non-linear part of the typer's second stage and novelty step.
//!
//! One place for each, so that a fix or a speed-up reaches every model at once.

pub mod boost;

/// The logistic function, in the precision of its argument (the models score in `f32`; Platt
/// scaling fits in `f64`).
pub fn sigmoid<T: Real>(z: T) -> T {
    let one = T::from(1.0);
    one / (one + (-z).exp())
}

/// The floating-point types [`sigmoid`] takes.
pub trait Real:
    Copy
    + From<f32>
    + std::ops::Neg<Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn exp(self) -> Self;
}

impl Real for f32 {
    fn exp(self) -> f32 {
        f32::exp(self)
    }
}

impl Real for f64 {
    fn exp(self) -> f64 {
        f64::exp(self)
    }
}

/// SplitMix64: a tiny seeded generator, stable across platforms and crate versions, for
/// reproducible training orders, batches and fold assignments.
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Shuffles `items` in place (Fisher-Yates from the end).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

/// A fixed permutation of `0..n` for a seed ([`SplitMix::shuffle`]): the training order of
/// every SGD-trained model, the same on every machine.
pub fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    SplitMix(seed).shuffle(&mut order);
    order
}

/// The fold of the `index`-th item dealt round-robin into `folds` folds (0 folds: one). The
/// CUAD cross-validations deal contracts this way in dataset order, so that every harness
/// holds out the same contracts together.
pub fn round_robin_fold(index: usize, folds: usize) -> usize {
    index % folds.max(1)
}

/// The fold of each item by its group: groups dealt round-robin in order of first appearance,
/// so that the items of one group (the spans of one contract) are held out together.
pub fn group_folds<G: std::hash::Hash + Eq>(
    groups: impl IntoIterator<Item = G>,
    folds: usize,
) -> Vec<usize> {
    let mut fold_of_group: std::collections::HashMap<G, usize> = std::collections::HashMap::new();
    groups
        .into_iter()
        .map(|g| {
            let next = fold_of_group.len();
            *fold_of_group
                .entry(g)
                .or_insert_with(|| round_robin_fold(next, folds))
        })
        .collect()
}

/// The fold (0..folds) of each of `n` rows: `folds` contiguous blocks of near-equal size, for
/// rows whose neighbours are near-copies of each other (sentences of one document).
pub fn block_folds(n: usize, folds: usize) -> Vec<usize> {
    let folds = folds.max(1);
    (0..n).map(|i| i * folds / n.max(1)).collect()
}

/// Options of [`fit_logistic`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sgd {
    /// Passes over the examples.
    pub epochs: usize,
    /// AdaGrad's base step.
    pub learning_rate: f32,
    /// L2 penalty on the weights (not on the bias).
    pub l2: f32,
    /// Examples whose loss gradient is smaller than this in magnitude are skipped: already
    /// fitted, they would only decay their weights and cost time. Zero skips nothing.
    pub min_gradient: f32,
    /// Whether to fit a bias (an intercept) beside the weights.
    pub bias: bool,
}

impl Sgd {
    /// Plain SGD options: no gradient skipping, no bias.
    pub fn new(epochs: usize, learning_rate: f32, l2: f32) -> Sgd {
        Sgd {
            epochs,
            learning_rate,
            l2,
            min_gradient: 0.0,
            bias: false,
        }
    }
}

/// One training example of [`fit_logistic`]: its sparse features `(index, value)`, its label,
/// and the weight of its loss (class balancing; 1 for none).
pub struct Example<X> {
    pub features: X,
    pub label: bool,
    pub weight: f32,
}

/// Logistic regression over `dim` sparse features by AdaGrad SGD, visiting examples in `order`
/// (indices given to `example`, which answers `None` for an example to leave out) for
/// `options.epochs` passes. Returns the weights and the bias (0 without one).
pub fn fit_logistic<X, F>(dim: usize, order: &[u32], options: &Sgd, example: F) -> (Vec<f32>, f32)
where
    X: IntoIterator<Item = (usize, f32)> + Clone,
    F: Fn(usize) -> Option<Example<X>>,
{
    let mut w = vec![0f32; dim];
    let mut g2 = vec![0f32; dim];
    let (mut b, mut b2) = (0f32, 0f32);
    for _ in 0..options.epochs {
        for &r in order {
            let Some(e) = example(r as usize) else {
                continue;
            };
            let z = b + e
                .features
                .clone()
                .into_iter()
                .map(|(i, v)| w[i] * v)
                .sum::<f32>();
            let g = (sigmoid(z) - if e.label { 1.0 } else { 0.0 }) * e.weight;
            if g.abs() < options.min_gradient {
                continue;
            }
            for (i, v) in e.features {
                let gi = g * v + options.l2 * w[i];
                g2[i] += gi * gi;
                w[i] -= options.learning_rate * gi / (g2[i].sqrt() + 1e-6);
            }
            if options.bias {
                b2 += g * g;
                b -= options.learning_rate * g / (b2.sqrt() + 1e-6);
            }
        }
    }
    (w, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffled_is_a_seeded_permutation() {
        let a = shuffled(100, 7);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<u32>>());
        assert_eq!(a, shuffled(100, 7));
        assert_ne!(a, shuffled(100, 8));
        assert!(shuffled(0, 1).is_empty());
        // Pinned: every model trained in this order (and the learned ranker's folds) depends on
        // these exact draws.
        assert_eq!(shuffled(10, 7), vec![8, 1, 5, 9, 0, 4, 3, 2, 6, 7]);
    }

    #[test]
    fn folds_deal_items_groups_and_blocks() {
        let dealt: Vec<usize> = (0..7).map(|i| round_robin_fold(i, 3)).collect();
        assert_eq!(dealt, vec![0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(round_robin_fold(5, 0), 0);
        // Groups in order of first appearance: 10 -> 0, 4 -> 1, 7 -> 0 (two folds).
        assert_eq!(
            group_folds([10, 10, 4, 7, 4, 10], 2),
            vec![0, 0, 1, 0, 1, 0]
        );
        assert_eq!(block_folds(5, 2), vec![0, 0, 0, 1, 1]);
        assert!(block_folds(0, 3).is_empty());
        let mut items = ['a', 'b', 'c', 'd'];
        SplitMix(3).shuffle(&mut items);
        let mut sorted = items;
        sorted.sort_unstable();
        assert_eq!(sorted, ['a', 'b', 'c', 'd']);
    }

    #[test]
    fn sigmoid_is_the_logistic_function() {
        assert_eq!(sigmoid(0.0), 0.5);
        assert!((sigmoid(2.0f32) + sigmoid(-2.0f32) - 1.0).abs() < 1e-6);
        assert!(sigmoid(40.0) > 0.999_999);
        assert_eq!(sigmoid(1.5f32), 1.0 / (1.0 + (-1.5f32).exp()));
        assert_eq!(sigmoid(-0.25f64), 1.0 / (1.0 + 0.25f64.exp()));
    }

    /// Feature 0 says "positive", feature 1 "negative"; feature 2 is always on.
    fn separable() -> Vec<(Vec<(usize, f32)>, bool)> {
        (0..40)
            .map(|i| {
                if i % 4 == 0 {
                    (vec![(0, 1.0), (2, 1.0)], true)
                } else {
                    (vec![(1, 1.0), (2, 1.0)], false)
                }
            })
            .collect()
    }

    #[test]
    fn learns_a_separable_problem_and_its_bias() {
        let rows = separable();
        let order = shuffled(rows.len(), 1);
        let options = Sgd {
            epochs: 20,
            learning_rate: 0.5,
            l2: 0.0,
            min_gradient: 0.0,
            bias: true,
        };
        let (w, b) = fit_logistic(3, &order, &options, |r| {
            Some(Example {
                features: rows[r].0.iter().copied(),
                label: rows[r].1,
                weight: 1.0,
            })
        });
        let score = |x: &[(usize, f32)]| sigmoid(b + x.iter().map(|&(i, v)| w[i] * v).sum::<f32>());
        assert!(score(&[(0, 1.0), (2, 1.0)]) > 0.9);
        assert!(score(&[(1, 1.0), (2, 1.0)]) < 0.1);
    }

    #[test]
    fn left_out_examples_teach_nothing_and_no_bias_stays_zero() {
        let rows = separable();
        let order = shuffled(rows.len(), 1);
        let options = Sgd {
            epochs: 5,
            learning_rate: 0.5,
            l2: 0.01,
            min_gradient: 1e-4,
            bias: false,
        };
        let (w, b) = fit_logistic(3, &order, &options, |r| {
            rows[r].1.then(|| Example {
                features: rows[r].0.iter().copied(),
                label: true,
                weight: 1.0,
            })
        });
        assert_eq!(b, 0.0);
        assert_eq!(
            w[1], 0.0,
            "only positives were seen; feature 1 never fires on them"
        );
        assert!(w[0] > 0.0 && w[2] > 0.0);
    }
}
