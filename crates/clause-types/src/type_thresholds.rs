//! The confidence at which a library stores a clause type on a clause. The threshold rules
//! `eval-cuad --clause-types` compares to choose it (the grid sweep) are `precedent_eval`'s
//! `clause_types::threshold_grid`.
//!
//! `precedent ingest` writes a CUAD category into a clause's `clause_types` when the typer's
//! confidence reaches [`STORED_TYPE_THRESHOLD`], and `search --type` filters on what was
//! written. A lawyer who filters by type loses every clause the filter drops (the query ranks
//! what passes, so a wrong type costs a lower rank, a missing one costs the clause), so the
//! threshold is the one with the best F1 on out-of-fold clause scores, not a high-precision one.
//!
//! Measured on the 398 CUAD contracts (5-fold CV, BENCHMARKS.md "Clause types stored at
//! ingest"; a clause is of a type when a piece of a CUAD annotation of the type covers half of
//! the shorter of the two): at 0.3, precision 67.0, recall 64.6, F1 65.8. One threshold for all
//! categories, each fold's chosen on the other folds, scores the same F1 (the folds choose 0.35
//! or 0.4; F1 is flat from 0.3 to 0.4, so the threshold was left where an earlier measurement put
//! it); a threshold per category chosen the same way (`GridCounts::choose` per category) does not
//! do better (66.0): the categories with few annotated clauses overfit their own threshold. So
//! one threshold is shipped; the per-category rule stays in the report as the comparison. A
//! clause stage of boosted trees reading more evidence than the best candidate score added about
//! a point and was not shipped (docs/experiments/cuad-typer.md).

/// The confidence at which ingest stores a clause type (see the module doc for how it was
/// chosen). Older libraries stored types at 0.6.
pub const STORED_TYPE_THRESHOLD: f32 = 0.3;
