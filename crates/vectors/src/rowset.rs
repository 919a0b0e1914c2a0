/// An allow-list of rows for filtered search ("only rank these clauses").
///
/// A bitset rather than a `HashSet`/sorted `Vec`: membership tests sit in the
/// hot loop of exact scans and HNSW traversal, and at 1M rows the whole set is
/// 125 KB, small enough to stay in cache. Rows beyond the index size are
/// simply ignored by searches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowSet {
    words: Vec<u64>,
    count: usize,
}

impl RowSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Pre-sizes the bitset for rows `0..rows` to avoid regrowth.
    pub fn with_row_capacity(rows: usize) -> Self {
        RowSet {
            words: Vec::with_capacity(rows.div_ceil(64)),
            count: 0,
        }
    }

    /// Adds a row; returns whether it was newly added.
    pub fn insert(&mut self, row: u32) -> bool {
        let w = (row / 64) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let bit = 1u64 << (row % 64);
        let fresh = self.words[w] & bit == 0;
        self.words[w] |= bit;
        self.count += usize::from(fresh);
        fresh
    }

    #[inline]
    pub fn contains(&self, row: u32) -> bool {
        self.words
            .get((row / 64) as usize)
            .is_some_and(|w| w & (1u64 << (row % 64)) != 0)
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Rows in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(wi as u32 * 64 + b)
            })
        })
    }

    /// Number of members below `n` (the index size); members beyond it can
    /// never match and must not inflate selectivity estimates.
    pub(crate) fn count_below(&self, n: usize) -> usize {
        let full = n / 64;
        let mut c: usize = self
            .words
            .iter()
            .take(full)
            .map(|w| w.count_ones() as usize)
            .sum();
        if let Some(w) = self.words.get(full) {
            let rem = n % 64;
            if rem > 0 {
                c += (w & ((1u64 << rem) - 1)).count_ones() as usize;
            }
        }
        c
    }
}

impl FromIterator<u32> for RowSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut s = RowSet::new();
        for r in iter {
            s.insert(r);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rowset_basics() {
        let s: RowSet = [5u32, 64, 3, 5, 200].into_iter().collect();
        assert_eq!(s.len(), 4);
        assert!(s.contains(64) && !s.contains(63) && !s.contains(100_000));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 5, 64, 200]);
        assert_eq!(s.count_below(64), 2);
        assert_eq!(s.count_below(65), 3);
        assert_eq!(s.count_below(10_000), 4);
        assert_eq!(s.count_below(0), 0);
    }
}
