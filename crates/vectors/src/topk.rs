use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// One search hit: a dense row id (the engine maps rows to clause ids) and
/// its similarity (dot product; cosine when vectors are L2-normalised).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbor {
    pub row: u32,
    pub score: f32,
}

/// A scored row with a *total* order: higher score first, then lower row.
///
/// Ties are common with boilerplate clauses (identical embeddings), and a
/// total order is what makes results reproducible across runs, thread counts
/// and index kinds. `total_cmp` keeps the order total even if a NaN sneaks
/// in (queries are validated, but stored data could in principle hold one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cand {
    pub score: f32,
    pub row: u32,
}

impl Ord for Cand {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.row.cmp(&self.row))
    }
}

impl PartialOrd for Cand {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Cand {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Cand {}

/// Bounded min-heap keeping the best `k` candidates seen so far.
///
/// The heap root is the current worst kept candidate, so the common case in a
/// large scan (new row is worse than everything kept) is one comparison.
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Reverse<Cand>>,
}

impl TopK {
    /// `capacity_hint` bounds the initial allocation so that a huge `k`
    /// (e.g. `usize::MAX` meaning "everything") never over-allocates.
    pub fn new(k: usize, capacity_hint: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k.min(capacity_hint).saturating_add(1)),
        }
    }

    #[inline]
    pub fn push(&mut self, row: u32, score: f32) {
        let c = Cand { score, row };
        if self.heap.len() < self.k {
            self.heap.push(Reverse(c));
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if c > worst.0 {
                *worst = Reverse(c);
            }
        }
    }

    pub fn merge(mut self, other: TopK) -> TopK {
        for Reverse(c) in other.heap {
            self.push(c.row, c.score);
        }
        self
    }

    pub fn into_sorted(self) -> Vec<Neighbor> {
        let mut v: Vec<Cand> = self.heap.into_iter().map(|Reverse(c)| c).collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.into_iter()
            .map(|c| Neighbor {
                row: c.row,
                score: c.score,
            })
            .collect()
    }
}
