//! TF-IDF features of a normalised sentence: word 1- and 2-grams, and character 2- to 5-grams
//! inside each word padded with spaces (scikit-learn's `char_wb`), each block with sublinear
//! term frequency, smoothed IDF and its own L2 norm.
//!
//! Why characters as well as words: the unfair types turn on a handful of stems written many
//! ways across companies ("terminat-e/-ion/-ing", "arbitra-l/-tor/-tion", "governed/governing"),
//! and the training set has only 28-191 positive sentences per type; character n-grams share
//! evidence between those forms where words cannot.
//!
//! Features are identified by a 64-bit FNV-1a hash of their text (tagged by kind), so the
//! vocabulary is a map from hash to column and a saved model holds no strings.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// A sparse row: (column, value), columns ascending.
pub type SparseRow = Vec<(u32, f32)>;

/// Which n-grams to extract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureOptions {
    /// Largest word n-gram (1 = words only).
    pub word_max_n: usize,
    /// Character n-gram sizes (inclusive); `None` for words only.
    pub char_range: Option<(usize, usize)>,
    /// Features seen in fewer training sentences are dropped.
    pub min_df: u32,
}

impl Default for FeatureOptions {
    fn default() -> Self {
        FeatureOptions {
            word_max_n: 2,
            char_range: Some((2, 5)),
            min_df: 2,
        }
    }
}

fn fnv(kind: u8, parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    eat(kind);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            eat(b' ');
        }
        p.bytes().for_each(&mut eat);
    }
    h
}

/// Hashed n-grams of one block with their counts, in hash order. A fixed order, not a hash map's
/// (which differs between maps and processes): the row's norm is a float sum over the block, and
/// a sum in another order can differ in the last bit, which made a sentence's margins differ
/// between a model and the same model reloaded.
fn count(hashes: impl Iterator<Item = u64>) -> Vec<(u64, u32)> {
    let mut hashes: Vec<u64> = hashes.collect();
    hashes.sort_unstable();
    let mut counts: Vec<(u64, u32)> = Vec::new();
    for h in hashes {
        match counts.last_mut() {
            Some((last, n)) if *last == h => *n += 1,
            _ => counts.push((h, 1)),
        }
    }
    counts
}

/// The word n-grams of `words` up to `max_n` words: `(first word, words, hash)`, every
/// occurrence, shortest n-grams first.
fn word_grams<'a>(
    words: &'a [&str],
    max_n: usize,
) -> impl Iterator<Item = (usize, usize, u64)> + 'a {
    (1..=max_n.max(1)).flat_map(move |n| {
        words
            .windows(n)
            .enumerate()
            .map(move |(start, w)| (start, n, fnv(b'w', w)))
    })
}

/// The two blocks of hashed n-gram counts of a normalised sentence: words, then characters.
fn ngram_counts(text: &str, options: &FeatureOptions) -> [Vec<(u64, u32)>; 2] {
    let words: Vec<&str> = text.split_whitespace().collect();
    let word_counts = count(word_grams(&words, options.word_max_n).map(|(_, _, h)| h));
    let char_counts = match options.char_range {
        None => Vec::new(),
        Some((lo, hi)) => count(words.iter().flat_map(|w| {
            let padded: Vec<char> = std::iter::once(' ')
                .chain(w.chars())
                .chain(std::iter::once(' '))
                .collect();
            let mut out = Vec::new();
            for n in lo..=hi {
                if n > padded.len() {
                    break;
                }
                for gram in padded.windows(n) {
                    let s: String = gram.iter().collect();
                    out.push(fnv(b'c', &[&s]));
                }
            }
            out
        })),
    };
    [word_counts, char_counts]
}

/// A fitted TF-IDF vocabulary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Vectorizer {
    pub options: FeatureOptions,
    /// Feature hashes, in column order.
    hashes: Vec<u64>,
    /// IDF of each column.
    idf: Vec<f32>,
    #[serde(skip)]
    columns: HashMap<u64, u32>,
}

impl Vectorizer {
    /// Fits the vocabulary and IDF on normalised training sentences.
    pub fn fit(texts: &[&str], options: &FeatureOptions) -> Vectorizer {
        let mut df: HashMap<u64, u32> = HashMap::new();
        for text in texts {
            for counts in ngram_counts(text, options) {
                for (h, _) in counts {
                    *df.entry(h).or_insert(0) += 1;
                }
            }
        }
        let mut kept: Vec<(u64, u32)> = df
            .into_iter()
            .filter(|&(_, d)| d >= options.min_df)
            .collect();
        kept.sort_unstable();
        let n = texts.len() as f32;
        let mut v = Vectorizer {
            options: options.clone(),
            hashes: kept.iter().map(|k| k.0).collect(),
            idf: kept
                .iter()
                .map(|&(_, d)| ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0)
                .collect(),
            columns: HashMap::new(),
        };
        v.index();
        v
    }

    /// Rebuilds the hash → column map (after loading).
    pub fn index(&mut self) {
        self.columns = self
            .hashes
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, i as u32))
            .collect();
    }

    /// Number of columns.
    pub fn dim(&self) -> usize {
        self.hashes.len()
    }

    /// The word n-grams of a normalised sentence that have a column: `(first word, words,
    /// column)` for the first occurrence of each column.
    pub fn word_columns(&self, text: &str) -> Vec<(usize, usize, u32)> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut seen = std::collections::HashSet::new();
        word_grams(&words, self.options.word_max_n)
            .filter_map(|(start, n, h)| Some((start, n, *self.columns.get(&h)?)))
            .filter(|&(_, _, col)| seen.insert(col))
            .collect()
    }

    /// The TF-IDF row of a normalised sentence.
    pub fn transform(&self, text: &str) -> SparseRow {
        let mut row: SparseRow = Vec::new();
        for counts in ngram_counts(text, &self.options) {
            let mut block: SparseRow = counts
                .into_iter()
                .filter_map(|(h, c)| {
                    let col = *self.columns.get(&h)?;
                    let tf = 1.0 + (c as f32).ln();
                    Some((col, tf * self.idf[col as usize]))
                })
                .collect();
            let norm = block.iter().map(|(_, v)| v * v).sum::<f32>().sqrt();
            if norm > 0.0 {
                block.iter_mut().for_each(|(_, v)| *v /= norm);
            }
            row.extend(block);
        }
        row.sort_unstable_by_key(|&(c, _)| c);
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_unit_length_and_unknown_grams_dropped() {
        let texts = ["you may terminate", "we may terminate", "you agree"];
        let v = Vectorizer::fit(&texts, &FeatureOptions::default());
        let row = v.transform("we may terminate");
        let norm2: f32 = row.iter().map(|(_, x)| x * x).sum();
        assert!((norm2 - 2.0).abs() < 1e-4, "{norm2}");
        // Nothing of an unseen word survives min_df 2.
        assert!(v.transform("zebra").is_empty());
    }

    #[test]
    fn a_row_is_the_same_bit_for_bit_from_any_copy_of_the_vectorizer() {
        let words = [
            "we",
            "may",
            "terminate",
            "suspend",
            "your",
            "account",
            "at",
            "any",
            "time",
            "without",
            "notice",
            "liability",
            "shall",
            "not",
            "exceed",
            "the",
            "fees",
            "paid",
        ];
        // Sentences of varied length and repeated words, so that the TF-IDF values are not
        // sums that come out the same in any order.
        let texts: Vec<String> = (0..120)
            .map(|i| {
                (0..6 + i % 23)
                    .map(|j| words[(i * 7 + j * j * 3 + j) % words.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let v = Vectorizer::fit(&refs, &FeatureOptions::default());
        let mut copy: Vectorizer =
            serde_json::from_str(&serde_json::to_string(&v).expect("json")).expect("reads");
        copy.index();
        for sentence in &refs {
            let first = v.transform(sentence);
            for _ in 0..10 {
                assert_eq!(copy.transform(sentence), first, "{sentence}");
                assert_eq!(v.transform(sentence), first, "{sentence}");
            }
        }
    }
}
