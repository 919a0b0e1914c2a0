//! Sparse features of a candidate span: hashed stemmed unigrams and bigrams of the span, words of
//! its surrounding sentence for short spans (a date means nothing without "effective" or
//! "expire" next to it), and what kind of span it is, how long, and where in the contract.

use precedent_text::{Analyzer, AnalyzerConfig, StopWords};

use crate::candidates::{Candidate, Kind};

/// Feature space size (hashing trick). 2^18 keeps the model at 41 × 256 Ki weights.
pub const DIM_BITS: u32 = 18;
pub const DIM: usize = 1 << DIM_BITS;

/// A sparse vector: sorted unique indices and their values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparseVec {
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

/// FNV-1a: stable across runs and platforms (std's hasher is randomly seeded).
pub(crate) fn fnv(parts: &[&str]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0x1f;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        for b in p.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    ((h >> 32) ^ h) as u32 & (DIM as u32 - 1)
}

/// Where the span sits in the contract, coarsely (titles, parties and dates live at the top).
fn position_bucket(position: Option<f64>) -> &'static str {
    match position {
        None => "unknown",
        Some(p) if p < 0.01 => "p01",
        Some(p) if p < 0.03 => "p03",
        Some(p) if p < 0.10 => "p10",
        Some(p) if p < 0.30 => "p30",
        Some(p) if p < 0.70 => "p70",
        Some(_) => "p100",
    }
}

fn length_bucket(words: usize) -> u32 {
    (usize::BITS - words.leading_zeros()).min(10)
}

pub struct Featurizer {
    analyzer: Analyzer,
}

/// How the clause models read words: lowercased and stemmed, with no stop words, because "not",
/// "no", "any", "shall" carry meaning in clauses. Shared by the span featurizer here and the
/// single-clause classifier's, so both read a word the same way.
pub(crate) fn clause_analyzer() -> Analyzer {
    Analyzer::new(AnalyzerConfig {
        lowercase: true,
        stop_words: StopWords::None,
        stem: true,
        max_token_len: 40,
    })
}

impl Default for Featurizer {
    fn default() -> Self {
        Featurizer {
            analyzer: clause_analyzer(),
        }
    }
}

impl Featurizer {
    /// Features of `span_text` of kind `kind`; `context` is the surrounding sentence for short
    /// spans; `position` the span's start as a fraction of the contract (None when unknown).
    pub fn features(
        &self,
        span_text: &str,
        kind: Kind,
        context: Option<&str>,
        position: Option<f64>,
    ) -> SparseVec {
        let mut text_features: Vec<u32> = Vec::new();
        let terms = self.analyzer.term_texts(span_text);
        for (i, t) in terms.iter().enumerate() {
            text_features.push(fnv(&["w", t]));
            if let Some(next) = terms.get(i + 1) {
                text_features.push(fnv(&["b", t, next]));
            }
        }
        let caps = span_text.chars().filter(|c| c.is_alphabetic()).count();
        let upper = span_text.chars().filter(|c| c.is_uppercase()).count();
        let mut pairs: Vec<(u32, f32)> = Vec::new();
        dedup_scaled(&mut text_features, 1.0, &mut pairs);
        if let Some(context) =
            context.filter(|_| matches!(kind, Kind::Date | Kind::Title | Kind::Piece))
        {
            let mut ctx: Vec<u32> = self
                .analyzer
                .term_texts(context)
                .iter()
                .map(|t| fnv(&["c", t]))
                .collect();
            dedup_scaled(&mut ctx, 0.7, &mut pairs);
        }
        let kind_name = kind.name();
        let pos = position_bucket(position);
        let len = length_bucket(terms.len()).to_string();
        let upper_share = if caps > 0 && upper * 10 >= caps * 8 {
            "upper"
        } else {
            "mixed"
        };
        for meta in [
            fnv(&["bias"]),
            fnv(&["kind", kind_name]),
            fnv(&["kind-len", kind_name, &len]),
            fnv(&["kind-pos", kind_name, pos]),
            fnv(&["pos", pos]),
            fnv(&["case", kind_name, upper_share]),
        ] {
            pairs.push((meta, 1.0));
        }
        pairs.sort_unstable_by_key(|p| p.0);
        let mut out = SparseVec::default();
        for (i, v) in pairs {
            if out.indices.last() == Some(&i) {
                if let Some(last) = out.values.last_mut() {
                    *last += v;
                }
            } else {
                out.indices.push(i);
                out.values.push(v);
            }
        }
        out
    }
}

/// Binary presence, scaled to L2 norm `norm` (long spans do not get larger scores for length).
fn dedup_scaled(features: &mut Vec<u32>, norm: f32, out: &mut Vec<(u32, f32)>) {
    features.sort_unstable();
    features.dedup();
    if features.is_empty() {
        return;
    }
    let value = norm / (features.len() as f32).sqrt();
    out.extend(features.iter().map(|&f| (f, value)));
}

/// Features of a candidate of `text`.
pub fn candidate_features(featurizer: &Featurizer, text: &str, c: &Candidate) -> SparseVec {
    let position = c.span.start as f64 / text.len().max(1) as f64;
    featurizer.features(
        &text[c.span.clone()],
        c.kind,
        Some(&text[c.context.clone()]),
        Some(position),
    )
}
