//! Feedback from the ranking itself: after the trees, clauses that resemble the ranker's own best
//! answers move up.
//!
//! Why: the trees score each clause on its own, but the best answers to one query resemble each
//! other (the same drafting pattern: a cap "equal to the fees paid in the twelve months
//! preceding the claim", a disclaimer that lists merchantability, fitness and non-infringement).
//! The mean MiniLM vector of the top [`FEEDBACK_CLAUSES`] is an exemplar of what this query wants,
//! found without reading any rating of it; each candidate's cosine to it, times
//! [`FEEDBACK_WEIGHT`], is added to its score. It is pseudo-relevance feedback applied to the
//! learned ranking rather than to the retriever's list.
//!
//! The top is taken after the query-constraint demotion ([`demote_against_query`]), so the
//! exemplar respects what the query excludes or requires, and the demotion is applied again
//! after the cosines are added, so no flagged clause climbs back.
//!
//! The weight is in the trees' score units and the cosine is absolute, so the stage does not
//! depend on how many candidates there are. The exemplar does depend on the list: the CV ranks
//! every judged clause of a query, serving ranks the hybrid retriever's top N, and on ACORD the
//! served top three are mostly clauses nobody judged for the query, so `train --cv` measures
//! the stage on a list the product never sees. The pipeline over held-out fold models
//! (`scripts/experiments/learned_depth/`) measures it as served: it still helps there
//! (docs/experiments/ranking.md, "Feedback as served").
//!
//! Why it stays: 5-fold CV by query over three fold seeds raised NDCG@5, NDCG@10 and 4-star
//! P@5 with it, while 5-star P@5 fell a little (figures in docs/experiments/ranking.md, "Feedback
//! from the ranking's own top three"). Both constants were set at one seed (top 3 of 3 / 5 / 10;
//! the weight is half the median ratio of the spread of tree scores to the spread of cosines in
//! a query's list, 13.5) and then checked at two more.
//!
//! Why the served list keeps the same weight: over hybrid's first 500 the trees' scores spread
//! about 1.4 times as much as over the judged clauses while the cosines spread the same, so the
//! same weight counts for less there; carrying the judged list's balance over (10 instead of 7)
//! ranked worse as served, on ACORD and on writers' rewordings (docs/experiments/ranking.md,
//! "The feedback weight, derived on the list it is applied to").

use precedent_vectors::VectorIndex;

use crate::features::demote_against_query;
use crate::memory::{dot, normalize};

/// How many of the ranker's best clauses make the exemplar.
pub const FEEDBACK_CLAUSES: usize = 3;

/// Weight of a clause's cosine to the exemplar, in the trees' score units.
pub const FEEDBACK_WEIGHT: f32 = 7.0;

/// Weight of a clause's cosine to the mean of the clauses a lawyer marked as wanted: twice the
/// pseudo-feedback's, because a lawyer's mark is a judgement where the ranking's own top three
/// are a guess. Fixed before any measurement (docs/experiments/ranking.md, "A lawyer's marks on
/// the first page").
pub const LIKED_WEIGHT: f32 = 2.0 * FEEDBACK_WEIGHT;

/// Weight of a clause's cosine to the mean of the clauses marked as not wanted, subtracted: a
/// quarter of [`LIKED_WEIGHT`], as Rocchio's classic weights (0.75 for the relevant centroid,
/// 0.15 to 0.25 for the non-relevant one) make a rejection a weaker signal than a wish; a
/// rejected clause is often near the answer ("the right clause type, not this version").
pub const UNLIKED_WEIGHT: f32 = LIKED_WEIGHT / 4.0;

/// Clauses a lawyer marked on a page of results: more like these, fewer like those. Rows of
/// the library; rows without a vector are ignored.
///
/// Serving passes none. Simulated from the ratings in cross-validation, wanted marks lowered
/// the rest of the ranking (docs/experiments/ranking.md, "A lawyer's marks on the first
/// page"); the type stays so that `train --cv --marks-study` measures a later marks model
/// against the same baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    pub liked: Vec<u32>,
    pub unliked: Vec<u32>,
}

impl Marks {
    pub fn is_empty(&self) -> bool {
        self.liked.is_empty() && self.unliked.is_empty()
    }
}

/// The unit mean of `rows`' vectors, or `None` when none of them has one.
fn unit_mean(rows: &[u32], vectors: &dyn VectorIndex) -> Option<Vec<f32>> {
    let mut sum = vec![0f32; vectors.dim()];
    let mut any = false;
    for v in rows.iter().filter_map(|&row| vectors.vector(row)) {
        sum.iter_mut().zip(&v).for_each(|(s, x)| *s += x);
        any = true;
    }
    any.then(|| {
        normalize(&mut sum);
        sum
    })
}

/// The final scores of `rows` (a query's candidates) from the trees' scores `raw`: the demotion
/// of clauses that go against the query (`flagged`, when the query constrains its answers, each
/// moved past `places` unflagged candidates of this list:
/// [`crate::features::AGAINST_QUERY_DEMOTION`] over a
/// query's judged clauses, [`crate::features::SERVED_AGAINST_QUERY_DEMOTION`] over served
/// candidates), and
/// with clause `vectors`, the feedback of the ranking's own top clauses and of a lawyer's
/// `marks` (Rocchio: plus [`LIKED_WEIGHT`] times the cosine to the liked clauses' mean, minus
/// [`UNLIKED_WEIGHT`] times the cosine to the unliked ones'), then the demotion again, so that
/// no mark lifts a clause that goes against the query. Without vectors, only the demotion (the
/// "learned without feedback" ablation).
pub fn final_scores(
    raw: &[f32],
    flagged: Option<&[bool]>,
    places: usize,
    rows: &[u32],
    vectors: Option<&dyn VectorIndex>,
    marks: &Marks,
) -> Vec<f32> {
    let demoted = |mut scores: Vec<f32>| {
        if let Some(flagged) = flagged {
            demote_against_query(&mut scores, flagged, places);
        }
        scores
    };
    let scores = demoted(raw.to_vec());
    let Some(vectors) = vectors else {
        return scores;
    };
    let candidates: Vec<Option<Vec<f32>>> = rows.iter().map(|&row| vectors.vector(row)).collect();
    let mut order: Vec<usize> = (0..scores.len().min(candidates.len())).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let top: Vec<u32> = order
        .iter()
        .take(FEEDBACK_CLAUSES)
        .map(|&i| rows[i])
        .collect();
    let exemplar = unit_mean(&top, vectors);
    let liked = unit_mean(&marks.liked, vectors);
    let unliked = unit_mean(&marks.unliked, vectors);
    let cosine = |v: &[f32], to: &Option<Vec<f32>>| to.as_ref().map_or(0.0, |t| dot(v, t));
    demoted(
        raw.iter()
            .zip(&candidates)
            .map(|(s, v)| {
                let Some(v) = v else { return *s };
                s + FEEDBACK_WEIGHT * cosine(v, &exemplar) + LIKED_WEIGHT * cosine(v, &liked)
                    - UNLIKED_WEIGHT * cosine(v, &unliked)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::AGAINST_QUERY_DEMOTION;
    use precedent_vectors::FlatIndex;

    fn index(vectors: &[[f32; 2]]) -> FlatIndex {
        FlatIndex::from_vec(2, vectors.iter().flatten().copied().collect()).expect("index")
    }

    #[test]
    fn clauses_like_the_top_three_move_up() {
        // Rows 0-2 are the ranker's top and point along x; row 3 (just under them) points along
        // y, row 4 (below it) along x: the feedback lifts row 4 over row 3.
        let vectors = index(&[[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]);
        let raw = [10.0, 9.0, 8.0, 5.0, 4.0];
        let scores = final_scores(
            &raw,
            None,
            AGAINST_QUERY_DEMOTION,
            &[0, 1, 2, 3, 4],
            Some(&vectors),
            &Marks::default(),
        );
        assert!(scores[4] > scores[3], "{scores:?}");
        assert!(scores[2] > scores[4], "{scores:?}");
    }

    #[test]
    fn flagged_clauses_stay_demoted_and_do_not_shape_the_exemplar() {
        // Row 0 has the best tree score but goes against the query: it is not in the exemplar
        // (rows 1-3, along y), and it stays below the next ten unflagged clauses (all four
        // here), so it ends last.
        let vectors = index(&[[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]]);
        let raw = [10.0, 9.0, 8.0, 7.0, 6.9];
        let flagged = [true, false, false, false, false];
        let scores = final_scores(
            &raw,
            Some(&flagged),
            AGAINST_QUERY_DEMOTION,
            &[0, 1, 2, 3, 4],
            Some(&vectors),
            &Marks::default(),
        );
        let lowest_other = scores[1..].iter().copied().fold(f32::INFINITY, f32::min);
        assert!(scores[0] < lowest_other, "{scores:?}");
        // Row 3 (like the exemplar) now clearly beats row 4 (unlike it).
        assert!(scores[3] - scores[4] > 1.0, "{scores:?}");
    }

    #[test]
    fn marked_clauses_pull_their_likes_up_and_push_theirs_down_but_not_past_a_demotion() {
        // Rows 0-2 lead along x; rows 3 (along y) and 4 (along z) tie below them. A lawyer likes
        // a clause along y (row 5, not a candidate): row 3 overtakes row 4. Unliking it instead
        // sinks row 3 under row 4.
        let vectors = FlatIndex::from_vec(
            3,
            vec![
                1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
                1.0, 0.0,
            ],
        )
        .expect("index");
        let raw = [10.0, 9.0, 8.0, 5.0, 5.0];
        let rows = [0, 1, 2, 3, 4];
        let scored = |flagged: Option<&[bool]>, marks: &Marks| {
            final_scores(
                &raw,
                flagged,
                AGAINST_QUERY_DEMOTION,
                &rows,
                Some(&vectors),
                marks,
            )
        };
        let liked = Marks {
            liked: vec![5],
            unliked: Vec::new(),
        };
        let scores = scored(None, &liked);
        assert!(scores[3] - scores[4] > LIKED_WEIGHT * 0.9, "{scores:?}");
        let unliked = Marks {
            liked: Vec::new(),
            unliked: vec![5],
        };
        let scores = scored(None, &unliked);
        assert!(scores[4] > scores[3], "{scores:?}");
        // A clause flagged against the query stays below the unflagged ones however liked.
        let flagged = [false, false, false, true, false];
        let scores = scored(Some(&flagged), &liked);
        assert!(scores[3] < scores[4], "{scores:?}");
    }

    #[test]
    fn the_demotion_counts_places_in_the_list_it_is_given() {
        // The best of 100 candidates goes against the query: the CV's ten places leave it at
        // rank 11, the served count at rank 76 (the same ten judged places in a list where few
        // candidates are judged).
        let raw: Vec<f32> = (0..100).map(|i| 100.0 - i as f32).collect();
        let rows: Vec<u32> = (0..100).collect();
        let mut flagged = vec![false; 100];
        flagged[0] = true;
        let rank_of_first = |places: usize| {
            let scores = final_scores(&raw, Some(&flagged), places, &rows, None, &Marks::default());
            scores.iter().filter(|&&s| s > scores[0]).count() + 1
        };
        assert_eq!(rank_of_first(AGAINST_QUERY_DEMOTION), 11);
        assert_eq!(
            rank_of_first(crate::features::SERVED_AGAINST_QUERY_DEMOTION),
            76
        );
    }
}
