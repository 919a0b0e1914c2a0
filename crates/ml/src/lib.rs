//! The machine-learning primitives Precedent's models share, one implementation each.
//!
//! - [`sigmoid`], the logistic function.
//! - [`SplitMix`] and [`shuffled`]: the seeded generator and permutation behind every training
//!   order and every shuffled fold assignment, the same on every machine.
//! - Fold assignment ([`round_robin_fold`], [`group_folds`], [`block_folds`]): which rows a
//!   cross-validation holds out together.
//! - [`fit_logistic`] / [`fit_logistics`]: the one logistic-regression training loop, with its
//!   update rule as an option ([`Optimizer`]): AdaGrad over sparse features (the clause typer, the
//!   single-clause classifier, the typer's second stage and its novelty step), decaying plain SGD
//!   over dense embeddings (the dense clause classifier), full-batch momentum (the learned
//!   ranker's category classifier). Every model is trained in a fixed, seeded example order, so that a model is a deterministic
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

/// How [`fit_logistic`] and [`fit_logistics`] step the weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Optimizer {
    /// Per example, per coordinate AdaGrad steps: `learning_rate` over the root of the
    /// coordinate's summed squared gradients, the L2 penalty added to the gradient. Suits sparse
    /// features of very different frequencies (the hashed text features).
    AdaGrad,
    /// Per example plain SGD at a rate decaying linearly from `learning_rate` to
    /// `1 - decay` of it over the whole run; L2 shrinks the weights by `1 - rate * l2` per step.
    /// Suits dense, centred features of unit scale (sentence embeddings).
    Sgd { decay: f32 },
    /// Full-batch gradient descent with momentum: one step per epoch on the mean gradient
    /// (L2 added on the weights). Suits small problems fitted to convergence.
    Momentum { momentum: f32 },
}

/// Options of [`fit_logistic`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sgd {
    /// Passes over the examples (full-batch steps for [`Optimizer::Momentum`]).
    pub epochs: usize,
    /// The base step.
    pub learning_rate: f32,
    /// L2 penalty on the weights (not on the bias).
    pub l2: f32,
    /// Examples whose loss gradient is smaller than this in magnitude are skipped: already
    /// fitted, they would only decay their weights and cost time. Zero skips nothing.
    pub min_gradient: f32,
    /// Whether to fit a bias (an intercept) beside the weights.
    pub bias: bool,
    /// The update rule.
    pub optimizer: Optimizer,
}

impl Sgd {
    /// AdaGrad options: no gradient skipping, no bias.
    pub fn new(epochs: usize, learning_rate: f32, l2: f32) -> Sgd {
        Sgd {
            epochs,
            learning_rate,
            l2,
            min_gradient: 0.0,
            bias: false,
            optimizer: Optimizer::AdaGrad,
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

/// A feature vector the training loop can read: a dot product with the weights and a walk over
/// its non-zero coordinates.
pub trait Features {
    /// `Σ w[i] * x[i]`.
    fn dot(&self, w: &[f32]) -> f32;
    /// Calls `f(i, x[i])` for each stored coordinate, in order.
    fn each(&self, f: impl FnMut(usize, f32));
}

/// Sparse features as `(index, value)` pairs, summed in their order.
impl<X: IntoIterator<Item = (usize, f32)> + Clone> Features for X {
    fn dot(&self, w: &[f32]) -> f32 {
        self.clone().into_iter().map(|(i, v)| w[i] * v).sum::<f32>()
    }

    fn each(&self, mut f: impl FnMut(usize, f32)) {
        for (i, v) in self.clone() {
            f(i, v)
        }
    }
}

/// A dense feature vector, summed by [`dot`] (eight accumulators).
pub struct Dense<V>(pub V);

impl<V: AsRef<[f32]>> Features for Dense<V> {
    fn dot(&self, w: &[f32]) -> f32 {
        dot(w, self.0.as_ref())
    }

    fn each(&self, mut f: impl FnMut(usize, f32)) {
        for (i, &v) in self.0.as_ref().iter().enumerate() {
            f(i, v)
        }
    }
}

/// The dot product of two dense vectors, with eight accumulators so that the compiler
/// vectorises the sum.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// The order examples are visited in, per epoch.
#[derive(Debug, Clone, Copy)]
pub enum Order<'a> {
    /// The same order every epoch.
    Same(&'a [u32]),
    /// One order per epoch (there must be `epochs` of them).
    PerEpoch(&'a [Vec<u32>]),
}

impl<'a> Order<'a> {
    fn epoch(&self, e: usize) -> &'a [u32] {
        match *self {
            Order::Same(order) => order,
            Order::PerEpoch(orders) => &orders[e],
        }
    }
}

/// Logistic regression over `dim` sparse features, visiting examples in `order` (indices given
/// to `example`, which answers `None` for an example to leave out) for `options.epochs` passes.
/// Returns the weights and the bias (0 without one).
pub fn fit_logistic<X, F>(dim: usize, order: &[u32], options: &Sgd, example: F) -> (Vec<f32>, f32)
where
    X: IntoIterator<Item = (usize, f32)> + Clone,
    F: Fn(usize) -> Option<Example<X>>,
{
    let mut fitted = fit_logistics(dim, 1, Order::Same(order), options, &[0.0], |r| {
        example(r).map(|e| (e.features, move |_| (e.label, e.weight)))
    });
    fitted.pop().expect("one output")
}

/// `outputs` independent logistic regressions over the same features, fitted in one pass over
/// the examples (an example's features stay in cache while each output updates): the training
/// loop of every linear model in Precedent. `example(r)` gives the features of example `r` and,
/// per output, its label and loss weight; `initial_bias` starts each output's bias. Returns each
/// output's weights and bias (the initial one without a fitted bias).
pub fn fit_logistics<X, L, F>(
    dim: usize,
    outputs: usize,
    order: Order<'_>,
    options: &Sgd,
    initial_bias: &[f32],
    example: F,
) -> Vec<(Vec<f32>, f32)>
where
    X: Features,
    L: Fn(usize) -> (bool, f32),
    F: Fn(usize) -> Option<(X, L)>,
{
    let mut w = vec![vec![0f32; dim]; outputs];
    let mut b = initial_bias.to_vec();
    // AdaGrad: summed squared gradients; momentum: velocities and the batch gradient.
    let mut acc = vec![vec![0f32; dim]; outputs];
    let mut acc_b = vec![0f32; outputs];
    let mut grad = vec![vec![0f32; dim]; outputs];
    let mut grad_b = vec![0f32; outputs];
    let total = ((0..options.epochs)
        .map(|e| order.epoch(e).len())
        .sum::<usize>())
    .max(1) as f32;
    let mut step = 0usize;
    for e in 0..options.epochs {
        let mut n = 0usize;
        for &r in order.epoch(e) {
            let Some((x, targets)) = example(r as usize) else {
                continue;
            };
            n += 1;
            let rate = match options.optimizer {
                Optimizer::Sgd { decay } => {
                    options.learning_rate * (1.0 - decay * step as f32 / total)
                }
                _ => options.learning_rate,
            };
            step += 1;
            for k in 0..outputs {
                let (label, weight) = targets(k);
                let (w, b) = (&mut w[k], &mut b[k]);
                let z = *b + x.dot(w);
                let g = (sigmoid(z) - if label { 1.0 } else { 0.0 }) * weight;
                if g.abs() < options.min_gradient {
                    continue;
                }
                match options.optimizer {
                    Optimizer::AdaGrad => {
                        let g2 = &mut acc[k];
                        x.each(|i, v| {
                            let gi = g * v + options.l2 * w[i];
                            g2[i] += gi * gi;
                            w[i] -= rate * gi / (g2[i].sqrt() + 1e-6);
                        });
                        if options.bias {
                            acc_b[k] += g * g;
                            *b -= rate * g / (acc_b[k].sqrt() + 1e-6);
                        }
                    }
                    Optimizer::Sgd { .. } => {
                        let g = g * rate;
                        let shrink = 1.0 - rate * options.l2;
                        if options.bias {
                            *b -= g;
                        }
                        x.each(|i, v| w[i] = w[i] * shrink - g * v);
                    }
                    Optimizer::Momentum { .. } => {
                        let gk = &mut grad[k];
                        x.each(|i, v| gk[i] += g * v);
                        grad_b[k] += g;
                    }
                }
            }
        }
        if let Optimizer::Momentum { momentum } = options.optimizer {
            let n = n as f32;
            let rate = options.learning_rate;
            for k in 0..outputs {
                for ((wi, vi), gi) in w[k].iter_mut().zip(acc[k].iter_mut()).zip(&grad[k]) {
                    *vi = momentum * *vi - rate * (gi / n + options.l2 * *wi);
                    *wi += *vi;
                }
                if options.bias {
                    acc_b[k] = momentum * acc_b[k] - rate * grad_b[k] / n;
                    b[k] += acc_b[k];
                }
                grad[k].iter_mut().for_each(|g| *g = 0.0);
                grad_b[k] = 0.0;
            }
        }
    }
    w.into_iter().zip(b).collect()
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
            optimizer: Optimizer::AdaGrad,
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
            optimizer: Optimizer::AdaGrad,
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

    fn fingerprint(fitted: &[(Vec<f32>, f32)]) -> u64 {
        fitted
            .iter()
            .flat_map(|(w, b)| w.iter().chain([b]))
            .fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
                (h ^ v.to_bits() as u64).wrapping_mul(0x100_0000_01b3)
            })
    }

    /// Each update rule's weights on a fixed random problem, bit for bit: the models trained
    /// with them (and the caches checked against their data) depend on these exact values. The
    /// callers pin their own fits too (`precedent-clause-types`' dense classifier,
    /// `precedent-learn`'s category classifier): those pins were taken from the training loops
    /// this one replaced, and hold unchanged.
    #[test]
    fn each_optimizer_is_pinned_bit_for_bit() {
        let mut rng = SplitMix(3);
        let mut uniform = || (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let dim = 11;
        let rows: Vec<Vec<f32>> = (0..50)
            .map(|_| (0..dim).map(|_| uniform()).collect())
            .collect();
        let labels = |r: usize, k: usize| rows[r][k] + 0.5 * rows[r][k + 3] > 0.1;
        let orders: Vec<Vec<u32>> = (0..4).map(|e| shuffled(rows.len(), e)).collect();
        let fit = |options: &Sgd, dense: bool| {
            let order = Order::PerEpoch(&orders);
            if dense {
                fit_logistics(dim, 2, order, options, &[0.1, -0.2], |r| {
                    Some((Dense(&rows[r]), move |k| (labels(r, k), 1.0 + k as f32)))
                })
            } else {
                fit_logistics(dim, 2, order, options, &[0.0, 0.0], |r| {
                    (r % 7 != 0).then(|| {
                        (rows[r].iter().copied().enumerate(), move |k| {
                            (labels(r, k), 1.0 + k as f32)
                        })
                    })
                })
            }
        };
        let base = Sgd {
            bias: true,
            min_gradient: 0.05,
            ..Sgd::new(4, 0.3, 1e-3)
        };
        let adagrad = fit(&base, false);
        let sgd = fit(
            &Sgd {
                optimizer: Optimizer::Sgd { decay: 0.9 },
                ..base
            },
            true,
        );
        let momentum = fit(
            &Sgd {
                optimizer: Optimizer::Momentum { momentum: 0.9 },
                min_gradient: 0.0,
                ..base
            },
            false,
        );
        let got = [
            fingerprint(&adagrad),
            fingerprint(&sgd),
            fingerprint(&momentum),
        ];
        assert_eq!(
            got,
            [
                0xc0ea_5c27_6434_1c88,
                0xd579_97e7_8097_a803,
                0x17cf_8da3_b4f9_3012
            ]
        );
    }

    #[test]
    fn dense_dot_is_the_dot_product() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.5).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-3);
        assert_eq!(Dense(&a).dot(&b), dot(&b, &a));
    }
}
