//! Judgements of the rated queries over a second library, learnt from alongside the ratings.
//!
//! ACORD's experts rated hand-cut clauses. A library built by `ingest` cuts the same contracts
//! differently (whole sections with their headings, numbering and neighbouring sentences), so
//! every feature falls differently on its clauses: lengths, coverage, cosines to the category
//! centroids. `map-qrels` carries the ratings over to the ingested clauses; training on those
//! judgements too lets the trees see the features as they fall on clauses cut by `ingest`,
//! which is where a ranker of contract libraries serves.
//!
//! The judgements are keyed by query id and take their texts and embeddings from the rated
//! queries they join, so a cross-validation fold learns from the second library's judgements of
//! its own training queries only, in the wordings it trains on.

use std::collections::HashMap;
use std::sync::Arc;

use precedent_formats::Qrels;
use precedent_library::Library;
use rayon::prelude::*;

use crate::features::{labelled_group, library_vectors, FeatureExtractor, Group};
use crate::memory::{RatedQuery, RatingMemory};
use crate::LearnError;

/// Query ids' judgements over the clauses of one library (typically `map-qrels` output over a
/// library of ingested contracts).
pub struct LibraryJudgements {
    library: Arc<Library>,
    /// Query id -> `(library row, label 0..=4)`, in row order.
    by_query: HashMap<String, Vec<(u32, i32)>>,
}

impl LibraryJudgements {
    /// Joins `qrels` with `library`'s clause ids. Judgements of clauses the library does not
    /// hold are skipped and counted in the warnings; an error when none remains or when the
    /// library has no clause vectors (every feature needs them).
    pub fn new(
        library: Arc<Library>,
        qrels: &Qrels,
    ) -> Result<(LibraryJudgements, Vec<String>), LearnError> {
        library_vectors(
            &library,
            "build it with vectors to learn from its judgements",
        )?;
        let source = qrels
            .source()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "judgements".into());
        let mut by_query = HashMap::new();
        let mut unknown = 0usize;
        for (query, judged) in qrels.iter() {
            let mut rows: Vec<(u32, i32)> = judged
                .iter()
                .filter_map(|(doc, &label)| {
                    let row = library.store().row(doc);
                    unknown += usize::from(row.is_none());
                    row.map(|row| (row, label.clamp(0, 4)))
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            rows.sort_unstable();
            by_query.insert(query.to_owned(), rows);
        }
        if by_query.is_empty() {
            return Err(LearnError::Invalid(format!(
                "{source}: none of its judgements names a clause of {}",
                library.root().display()
            )));
        }
        let warnings = if unknown > 0 {
            vec![format!(
                "{source}: {unknown} judgements name clauses not in {}; skipped",
                library.root().display()
            )]
        } else {
            Vec::new()
        };
        Ok((LibraryJudgements { library, by_query }, warnings))
    }

    /// How many query ids have judgements here.
    pub fn num_queries(&self) -> usize {
        self.by_query.len()
    }

    /// How many judgements, over all queries.
    pub fn num_judgements(&self) -> usize {
        self.by_query.values().map(Vec::len).sum()
    }

    /// Training lists over this library for those of `rated` (with their unit `embeddings`,
    /// same order) that it judges, features computed with `memory` as over the main library.
    pub(crate) fn groups(
        &self,
        memory: &Arc<RatingMemory>,
        rated: &[RatedQuery],
        embeddings: &[Vec<f32>],
    ) -> Result<Vec<Group>, LearnError> {
        let extractor = FeatureExtractor::new(self.library.clone(), memory.clone());
        rated
            .par_iter()
            .zip(embeddings.par_iter())
            .filter_map(|(q, e)| self.by_query.get(&q.id).map(|judged| (q, e, judged)))
            .map(|(q, e, judged)| labelled_group(&extractor, q, e, judged.iter().copied(), 0))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{library, unit};

    const CONTRACT: &[(&str, &str)] = &[
        (
            "c#1",
            "In no event shall either party's liability exceed the fees paid.",
        ),
        (
            "c#2",
            "This Agreement is governed by the laws of the State of New York.",
        ),
        (
            "c#3",
            "Licensee shall indemnify Licensor against third party claims.",
        ),
    ];

    #[test]
    fn judgements_join_the_library_by_clause_id_and_count_what_they_skip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lib = library(&dir.path().join("lib"), CONTRACT, true);
        let mut qrels = Qrels::new();
        qrels.insert("cap", "c#2", 0);
        qrels.insert("cap", "c#1", 7);
        qrels.insert("cap", "elsewhere#9", 4);
        qrels.insert("gone", "elsewhere#1", 3);
        let (judgements, warnings) = LibraryJudgements::new(lib, &qrels).expect("judgements");
        assert_eq!(judgements.num_queries(), 1);
        assert_eq!(judgements.num_judgements(), 2);
        // Rows in order, labels clamped to the rating scale.
        assert_eq!(judgements.by_query["cap"], vec![(0, 4), (1, 0)]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("2 judgements"), "{}", warnings[0]);
    }

    #[test]
    fn a_library_without_vectors_or_without_a_judged_clause_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut qrels = Qrels::new();
        qrels.insert("cap", "c#1", 4);
        let bare = library(&dir.path().join("bare"), CONTRACT, false);
        let err = LibraryJudgements::new(bare, &qrels).err().expect("refused");
        assert!(err.to_string().contains("no clause vectors"), "{err}");
        let lib = library(&dir.path().join("lib"), CONTRACT, true);
        let mut elsewhere = Qrels::new();
        elsewhere.insert("cap", "other#1", 4);
        let err = LibraryJudgements::new(lib, &elsewhere)
            .err()
            .expect("refused");
        assert!(err.to_string().contains("none of its judgements"), "{err}");
    }

    #[test]
    fn training_lists_come_from_the_judged_queries_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rated_lib = library(
            &dir.path().join("rated"),
            &[
                (
                    "a1",
                    "Liability shall not exceed the fees paid under this Agreement.",
                ),
                (
                    "a2",
                    "The laws of the State of New York govern this Agreement.",
                ),
                (
                    "a3",
                    "Each party shall indemnify the other against third party claims.",
                ),
            ],
            true,
        );
        let query =
            |id: &str, text: &str, category: &str, ratings: Vec<(&str, u32, i32)>| RatedQuery {
                id: id.into(),
                text: text.into(),
                wording: String::new(),
                category: Some(category.into()),
                ratings: ratings
                    .into_iter()
                    .map(|(c, row, label)| (c.to_owned(), row, label))
                    .collect(),
            };
        let rated = vec![
            query(
                "cap",
                "cap on liability",
                "Limitation of Liability",
                vec![("a1", 0, 4), ("a2", 1, 0)],
            ),
            query(
                "law",
                "governing law",
                "Governing Law",
                vec![("a2", 1, 3), ("a3", 2, 0)],
            ),
        ];
        let embeddings = vec![unit(0), unit(1)];
        let memory =
            Arc::new(RatingMemory::fit(&rated, &embeddings, &rated_lib, None).expect("memory"));
        let contracts = library(&dir.path().join("contracts"), CONTRACT, true);
        let mut qrels = Qrels::new();
        qrels.insert("cap", "c#1", 4);
        qrels.insert("cap", "c#3", 1);
        qrels.insert("cap", "c#2", 0);
        let (judgements, _) = LibraryJudgements::new(contracts, &qrels).expect("judgements");
        let groups = judgements
            .groups(&memory, &rated, &embeddings)
            .expect("groups");
        // Only "cap" is judged here: one list, its labels in row order.
        assert_eq!(groups.len(), 1);
        let labels: Vec<i32> = groups[0].iter().map(|(_, l)| *l).collect();
        assert_eq!(labels, vec![4, 0, 1]);
        // Features are computed over this library: the capped clause matches the query's terms.
        let coverage = crate::FEATURE_NAMES
            .iter()
            .position(|n| *n == "query_term_coverage")
            .expect("coverage feature");
        assert!(groups[0][0].0[coverage] > groups[0][1].0[coverage]);
    }

    #[test]
    fn served_negatives_add_the_unjudged_hybrid_candidates_at_label_zero() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lib = library(&dir.path().join("lib"), CONTRACT, true);
        let query = RatedQuery {
            id: "cap".into(),
            text: "liability exceed the fees paid".into(),
            wording: String::new(),
            category: Some("Limitation of Liability".into()),
            ratings: vec![("c#1".into(), 0, 4)],
        };
        let rated = vec![query];
        let embeddings = vec![unit(0)];
        let memory = Arc::new(RatingMemory::fit(&rated, &embeddings, &lib, None).expect("memory"));
        let extractor = FeatureExtractor::new(lib.clone(), memory);
        let judged = || rated[0].ratings.iter().map(|r| (r.1, r.2));
        let plain = labelled_group(&extractor, &rated[0], &embeddings[0], judged(), 0)
            .expect("judged list");
        assert_eq!(plain.iter().map(|(_, l)| *l).collect::<Vec<_>>(), vec![4]);
        // Every clause of this small library is among the first 10 candidates: the judged one
        // keeps its label, and the two nobody judged join at label 0, once each.
        let served = labelled_group(&extractor, &rated[0], &embeddings[0], judged(), 10)
            .expect("served list");
        assert_eq!(
            served.iter().map(|(_, l)| *l).collect::<Vec<_>>(),
            vec![4, 0, 0]
        );
        let candidates = extractor
            .served_rows(
                &crate::features::QueryInput {
                    id: None,
                    text: rated[0].text.clone(),
                    embedding: embeddings[0].clone(),
                },
                1,
            )
            .expect("candidates");
        // The clause that shares the query's words and leans on its direction comes first.
        assert_eq!(candidates, vec![0]);
    }
}
