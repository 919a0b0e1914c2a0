//! One CUAD contract prepared for the typer: its candidate spans, their features and labels,
//! and its section headings. The first stage trains on these, the second stage and the choice of
//! answers read them.

use precedent_cuad::dataset::CuadContract;
use rayon::prelude::*;

use crate::candidates::{candidates, Candidate};
use crate::features::{candidate_features, Featurizer, SparseVec};
use crate::labels::label;
use crate::sections::Sections;

/// Candidates, features and labels of one contract.
pub struct Prepared {
    pub candidates: Vec<Candidate>,
    pub features: Vec<SparseVec>,
    pub bits: Vec<u64>,
    /// Section headings and which category they name, for the second stage.
    pub sections: Sections,
}

/// Generates and labels the candidates of each contract (in parallel).
pub fn prepare(contracts: &[&CuadContract]) -> Vec<Prepared> {
    let featurizer = Featurizer::default();
    contracts
        .par_iter()
        .map(|c| {
            let candidates = candidates(&c.text);
            let bits = label(c, &candidates).candidate_bits;
            let features = candidates
                .iter()
                .map(|cand| candidate_features(&featurizer, &c.text, cand))
                .collect();
            let sections = Sections::of(&c.text, &candidates);
            Prepared {
                candidates,
                features,
                bits,
                sections,
            }
        })
        .collect()
}
