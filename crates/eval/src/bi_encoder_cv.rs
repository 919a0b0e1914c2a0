//! Cross-validating a bi-encoder fine-tuned on the ratings ([`precedent_learn::bi_encoder`]):
//! does the tuned encoder's cosine rank the held-out queries' judged clauses better than the
//! encoder as shipped, in every wording?
//!
//! Folds are drawn by query id exactly as the ranker's cross-validation draws them
//! ([`assign_folds`], same seed, same folds), so every wording of a held-out query is held out
//! together and the figures sit beside `train --cv`'s "dense alone" row. Each fold starts again
//! from the shipped encoder. The frozen layers' states of every text are computed once: they
//! do not depend on what the top layers learn. Scoring is ACORD's condensed protocol over each
//! query's judged clauses, with the trec_eval-exact metrics; texts are embedded as they are,
//! without the ranker's query readers, for the base and the tuned encoder alike.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use precedent_engine::bi_encoder_training::{
    bi_encoder_trainer, rated_lists, ListStates, RatedLists,
};
use precedent_engine::Report;
use precedent_learn::bi_encoder::{listwise_steps, tune_listwise, ListwisePlan, ListwiseQuery};
use precedent_learn::cv::{assign_folds, ColumnOverride};
use precedent_metrics::{MeanMetrics, QueryMetrics, Scored};
use precedent_models::{BiEncoderTrainer, FineTuneOptions, FrozenState};
use serde::Serialize;

use crate::ranker_cv::{read_all_qrels, read_wordings};

/// The training lists of a corpus, its query files (one per wording) and rating files
/// ([`rated_lists`]).
pub fn read_rated_lists(
    corpus: &Path,
    queries: &[PathBuf],
    qrels: &[PathBuf],
) -> Result<RatedLists> {
    let docs = precedent_formats::read_corpus(corpus)?;
    let wordings = read_wordings(queries)?;
    let qrels = read_all_qrels(qrels)?;
    rated_lists(&docs, &wordings, &qrels)
}

/// What to cross-validate (also what [`cross_fitted_cosines`] fits).
pub struct BiEncoderCvPlan<'a> {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    pub corpus: &'a Path,
    /// Query files, each one wording of the same queries.
    pub queries: &'a [PathBuf],
    /// Rating files, merged.
    pub qrels: &'a [PathBuf],
    /// The encoder every fold starts from (and the baseline).
    pub base_model: &'a str,
    pub folds: usize,
    /// Seeds the fold assignment (the ranker's `train --cv --seed`).
    pub fold_seed: u64,
    /// Fine-tuning options; `steps` is set per fold from the plan.
    pub options: FineTuneOptions,
    pub listwise: ListwisePlan,
    /// Score the held-out queries on this library's judged clauses (ratings `score_qrels`)
    /// instead of the training corpus's: the encoders still learn from the corpus's lists.
    pub score_index: Option<&'a Path>,
    pub score_qrels: &'a [PathBuf],
}

/// The rated lists of a library's clauses: its clauses judged in `qrels` (ratings carried to
/// it, e.g. by `map-qrels`), with the query files' wordings.
pub fn library_rated_lists(
    index: &Path,
    queries: &[PathBuf],
    qrels_paths: &[PathBuf],
) -> Result<RatedLists> {
    let library = precedent_library::Library::open(index)
        .with_context(|| format!("opening the library {}", index.display()))?;
    let wordings = read_wordings(queries)?;
    let qrels = read_all_qrels(qrels_paths)?;
    let mut judged = BTreeSet::new();
    for (_, qs) in &wordings {
        for q in qs {
            if let Some(j) = qrels.judged(&q.id) {
                judged.extend(j.keys().cloned());
            }
        }
    }
    let store = library.store();
    let docs = judged
        .iter()
        .filter_map(|id| store.row(id))
        .map(|row| store.clause(row).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    if docs.is_empty() {
        let files: Vec<String> = qrels_paths
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        bail!(
            "none of the ratings in {} names a clause of the library {} (carry them to it with `precedent map-qrels`)",
            files.join(", "),
            index.display()
        );
    }
    rated_lists(&docs, &wordings, &qrels)
}

/// One wording's figures, the shipped encoder against the tuned ones (each query scored by
/// the encoder tuned without it).
#[derive(Debug, Clone, Serialize)]
pub struct WordingFigures {
    pub wording: String,
    pub base: MeanMetrics,
    pub tuned: MeanMetrics,
}

/// One fold's log.
#[derive(Debug, Clone, Serialize)]
pub struct FoldLog {
    pub training_queries: usize,
    pub held_out_queries: usize,
    pub steps: usize,
    pub epoch_losses: Vec<f32>,
    pub training_seconds: f64,
    pub scoring_seconds: f64,
}

/// The cross-validation's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct BiEncoderCv {
    pub wordings: Vec<WordingFigures>,
    /// Unweighted means over the wordings.
    pub base_mean: MeanMetrics,
    pub tuned_mean: MeanMetrics,
    pub queries: usize,
    pub clauses: usize,
    pub states_seconds: f64,
    pub folds: Vec<FoldLog>,
    pub options: FineTuneOptions,
    pub listwise: ListwisePlan,
}

impl BiEncoderCv {
    /// The per-wording table, NDCG@5 / NDCG@10 / 4-star P@5 ×100, and the fold log.
    pub fn table(&self) -> String {
        let f = |m: &MeanMetrics| {
            format!(
                "{:.1} / {:.1} / {:.1}",
                100.0 * m.ndcg5,
                100.0 * m.ndcg10,
                100.0 * m.p5_4star.unwrap_or(0.0)
            )
        };
        let mut out = format!(
            "bi-encoder fine-tuned on the ratings, {}-fold CV by query id ({} queries, {} judged clauses)\n",
            self.folds.len(),
            self.queries,
            self.clauses
        );
        out.push_str(&format!(
            "{:<10} {:<22} {:<22} {:>8}\n",
            "wording", "shipped @5/@10/4*P@5", "tuned @5/@10/4*P@5", "d NDCG@5"
        ));
        let rows = self
            .wordings
            .iter()
            .map(|w| (w.wording.as_str(), &w.base, &w.tuned))
            .chain(std::iter::once(("mean", &self.base_mean, &self.tuned_mean)));
        for (name, base, tuned) in rows {
            out.push_str(&format!(
                "{:<10} {:<22} {:<22} {:>+8.1}\n",
                name,
                f(base),
                f(tuned),
                100.0 * (tuned.ndcg5 - base.ndcg5)
            ));
        }
        out.push_str(&format!(
            "frozen states of every text: {:.0} s\n",
            self.states_seconds
        ));
        for (i, fold) in self.folds.iter().enumerate() {
            let losses: Vec<String> = fold
                .epoch_losses
                .iter()
                .map(|l| format!("{l:.3}"))
                .collect();
            out.push_str(&format!(
                "fold {}: {} training queries, {} held out, {} steps in {:.0} s (epoch losses {}), scored in {:.0} s\n",
                i + 1,
                fold.training_queries,
                fold.held_out_queries,
                fold.steps,
                fold.training_seconds,
                losses.join(", "),
                fold.scoring_seconds
            ));
        }
        out
    }
}

/// The vectors `trainer` gives the states at `indices` (each embedded once), at their index in
/// `states`; every other slot is left empty. Why: after a fold's training only the texts it
/// scores need embedding again.
fn embed_some(
    trainer: &mut BiEncoderTrainer,
    states: &[FrozenState],
    indices: impl IntoIterator<Item = usize>,
) -> Result<Vec<Vec<f32>>> {
    let wanted: Vec<usize> = indices
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let vectors = trainer.embed_states(&wanted.iter().map(|&i| &states[i]).collect::<Vec<_>>())?;
    let mut out = vec![Vec::new(); states.len()];
    for (i, v) in wanted.into_iter().zip(vectors) {
        out[i] = v;
    }
    Ok(out)
}

/// Per query and wording, the metrics of ranking its judged clauses by cosine.
fn score_queries(
    inputs: &RatedLists,
    queries: &[&ListwiseQuery],
    query_vectors: &[Vec<f32>],
    clause_vectors: &[Vec<f32>],
) -> Vec<Vec<QueryMetrics>> {
    let cosine = |a: &[f32], b: &[f32]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum()
    };
    queries
        .iter()
        .map(|q| {
            let judged: HashMap<String, i32> = q
                .judged
                .iter()
                .map(|&(i, l)| (inputs.clause_ids[i].clone(), l))
                .collect();
            q.wordings
                .iter()
                .map(|&w| {
                    let run: Vec<Scored> = q
                        .judged
                        .iter()
                        .map(|&(i, _)| Scored {
                            doc: inputs.clause_ids[i].as_str(),
                            score: cosine(&query_vectors[w], &clause_vectors[i]),
                        })
                        .collect();
                    QueryMetrics::compute(&run, &judged)
                })
                .collect()
        })
        .collect()
}

/// Runs the cross-validation (see the module docs).
pub fn cross_validate_bi_encoder(
    plan: &BiEncoderCvPlan<'_>,
    report: &dyn Report,
) -> Result<BiEncoderCv> {
    if plan.folds < 2 {
        bail!("cross-validation needs at least 2 folds");
    }
    let inputs = read_rated_lists(plan.corpus, plan.queries, plan.qrels)?;
    let library_lists = plan
        .score_index
        .map(|dir| library_rated_lists(dir, plan.queries, plan.score_qrels))
        .transpose()?;
    let started = Instant::now();
    report.note(&format!(
        "frozen states of {} query texts and {} judged clauses",
        inputs.query_texts.len(),
        inputs.clause_texts.len()
    ));
    let mut base = bi_encoder_trainer(plan.base_model, &plan.options, 1)?;
    let ListStates {
        queries: query_states,
        clauses: clause_states,
    } = ListStates::compute(&mut base, &inputs)?;
    // The lists scored, with their states: the library's when given, else the training ones.
    let library = library_lists
        .map(|lists| -> Result<_> {
            let states = ListStates::compute(&mut base, &lists)?;
            Ok((lists, states))
        })
        .transpose()?;
    let (scored, scored_query_states, scored_clause_states) = match &library {
        Some((lists, states)) => (lists, &states.queries, &states.clauses),
        None => (&inputs, &query_states, &clause_states),
    };
    let base_queries = base.embed_states(&scored_query_states.iter().collect::<Vec<_>>())?;
    let base_clauses = base.embed_states(&scored_clause_states.iter().collect::<Vec<_>>())?;
    drop(base);
    let states_seconds = started.elapsed().as_secs_f64();

    let ids: Vec<&str> = inputs.queries.iter().map(|q| q.id.as_str()).collect();
    let fold_of = assign_folds(&ids, plan.folds, plan.fold_seed);
    let all: Vec<&ListwiseQuery> = inputs.queries.iter().collect();
    // Queries scored: those with judged clauses where they are scored, and a fold.
    let all_scored: Vec<&ListwiseQuery> = scored
        .queries
        .iter()
        .filter(|q| fold_of.contains_key(&q.id))
        .collect();
    let base_metrics = score_queries(scored, &all_scored, &base_queries, &base_clauses);
    let mut tuned_metrics: Vec<Option<Vec<QueryMetrics>>> = vec![None; all_scored.len()];
    let mut folds = Vec::with_capacity(plan.folds);
    for fold in 0..plan.folds {
        let in_fold = |q: &ListwiseQuery| fold_of.get(&q.id) == Some(&fold);
        let training: Vec<&ListwiseQuery> = all.iter().copied().filter(|q| !in_fold(q)).collect();
        let held_out: Vec<usize> = (0..all_scored.len())
            .filter(|&i| in_fold(all_scored[i]))
            .collect();
        if held_out.is_empty() {
            continue;
        }
        let steps = listwise_steps(&training, &plan.listwise);
        if steps == 0 {
            bail!(
                "fold {}: no training query has a clause rated above one star",
                fold + 1
            );
        }
        let mut trainer = bi_encoder_trainer(plan.base_model, &plan.options, steps)?;
        let t0 = Instant::now();
        let mut on_step = |step: usize, loss: f32| {
            if step.is_multiple_of(25) || step == steps {
                report.note(&format!(
                    "fold {}/{}: step {step}/{steps}, loss {loss:.3}",
                    fold + 1,
                    plan.folds
                ));
            }
        };
        let epoch_losses = tune_listwise(
            &mut trainer,
            &query_states,
            &clause_states,
            &training,
            &plan.listwise,
            &mut on_step,
        )?;
        let training_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let held: Vec<&ListwiseQuery> = held_out.iter().map(|&i| all_scored[i]).collect();
        // Only the held-out queries' texts and judged clauses are embedded again.
        let query_vectors = embed_some(
            &mut trainer,
            scored_query_states,
            held.iter().flat_map(|q| q.wordings.iter().copied()),
        )?;
        let clause_vectors = embed_some(
            &mut trainer,
            scored_clause_states,
            held.iter().flat_map(|q| q.judged.iter().map(|&(i, _)| i)),
        )?;
        for (&i, metrics) in held_out.iter().zip(score_queries(
            scored,
            &held,
            &query_vectors,
            &clause_vectors,
        )) {
            tuned_metrics[i] = Some(metrics);
        }
        folds.push(FoldLog {
            training_queries: training.len(),
            held_out_queries: held.len(),
            steps,
            epoch_losses,
            training_seconds,
            scoring_seconds: t1.elapsed().as_secs_f64(),
        });
    }

    let per_wording = |metrics: &[Vec<QueryMetrics>], w: usize| {
        MeanMetrics::of(
            metrics
                .iter()
                .filter_map(|per| per.get(w))
                .collect::<Vec<_>>(),
        )
    };
    let tuned_metrics: Vec<Vec<QueryMetrics>> = tuned_metrics
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .context("a query was in no fold")?;
    let wordings: Vec<WordingFigures> = scored
        .wordings
        .iter()
        .enumerate()
        .map(|(w, name)| WordingFigures {
            wording: name.clone(),
            base: per_wording(&base_metrics, w),
            tuned: per_wording(&tuned_metrics, w),
        })
        .collect();
    Ok(BiEncoderCv {
        base_mean: MeanMetrics::mean_of(wordings.iter().map(|w| &w.base).collect::<Vec<_>>()),
        tuned_mean: MeanMetrics::mean_of(wordings.iter().map(|w| &w.tuned).collect::<Vec<_>>()),
        wordings,
        queries: all_scored.len(),
        clauses: scored.clause_texts.len(),
        states_seconds,
        folds,
        options: plan.options.clone(),
        listwise: plan.listwise.clone(),
    })
}

/// One encoder of the cross-fitting: the folds it never sees, and the (fold it scores, outer
/// fold whose values those scores are) pairs it serves.
type CrossFit = (Vec<usize>, Vec<(usize, usize)>);

/// The tuned bi-encoder's cosine of every rated (entry, clause) pair, cross-fitted for the
/// ranker's cross-validation as [`ColumnOverride`] asks: in outer fold `f`, an entry of `f`
/// is scored by the encoder tuned on every other fold, and an entry of fold `g != f` by the
/// encoder tuned on the folds other than `f` and `g` (one encoder per pair of folds serves
/// both), so no score comes from a model that saw its query or the fold held out. `K` outer
/// encoders and `K(K-1)/2` pair encoders in all.
pub fn cross_fitted_cosines(
    plan: &BiEncoderCvPlan<'_>,
    rated: &[precedent_learn::RatedQuery],
    column: usize,
    report: &dyn Report,
) -> Result<ColumnOverride> {
    if plan.folds < 2 {
        bail!("cross-fitting needs at least 2 folds");
    }
    let lists = read_rated_lists(plan.corpus, plan.queries, plan.qrels)?;
    let mut base = bi_encoder_trainer(plan.base_model, &plan.options, 1)?;
    report.note("frozen states of every query text and judged clause");
    let states = ListStates::compute(&mut base, &lists)?;
    drop(base);

    // Each rated entry as (list query, wording position), and its clauses as list indices.
    let query_index: HashMap<&str, usize> = lists
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    let clause_index: HashMap<&str, usize> = lists
        .clause_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let mut entries = Vec::with_capacity(rated.len());
    for r in rated {
        let q = *query_index
            .get(r.id.as_str())
            .with_context(|| format!("rated query {:?} is not in the query files", r.id))?;
        let k = if lists.wordings.len() > 1 {
            lists
                .wordings
                .iter()
                .position(|w| *w == r.wording)
                .with_context(|| format!("query {:?}: unknown wording {:?}", r.id, r.wording))?
        } else {
            0
        };
        let text = *lists.queries[q]
            .wordings
            .get(k)
            .with_context(|| format!("query {:?} has no wording {k}", r.id))?;
        let clauses = r
            .ratings
            .iter()
            .map(|(id, _, _)| {
                clause_index
                    .get(id.as_str())
                    .copied()
                    .with_context(|| format!("rated clause {id:?} is not in the corpus"))
            })
            .collect::<Result<Vec<_>>>()?;
        entries.push((q, text, clauses));
    }

    let ids: Vec<&str> = lists.queries.iter().map(|q| q.id.as_str()).collect();
    let fold_of = assign_folds(&ids, plan.folds, plan.fold_seed);
    let fold_of_query: Vec<usize> = lists
        .queries
        .iter()
        .map(|q| fold_of.get(&q.id).copied().unwrap_or(0))
        .collect();
    let mut values: Vec<HashMap<usize, Vec<f32>>> = vec![HashMap::new(); plan.folds];
    let mut fits: Vec<CrossFit> = Vec::new();
    for f in 0..plan.folds {
        fits.push((vec![f], vec![(f, f)]));
    }
    for f in 0..plan.folds {
        for g in f + 1..plan.folds {
            fits.push((vec![f, g], vec![(g, f), (f, g)]));
        }
    }
    for (n, (unseen, serves)) in fits.iter().enumerate() {
        let training: Vec<&ListwiseQuery> = lists
            .queries
            .iter()
            .zip(&fold_of_query)
            .filter(|(_, f)| !unseen.contains(f))
            .map(|(q, _)| q)
            .collect();
        let steps = listwise_steps(&training, &plan.listwise);
        if steps == 0 {
            bail!("no query outside folds {unseen:?} has a clause rated above one star");
        }
        report.note(&format!(
            "encoder {}/{}: {} training queries, unseen folds {unseen:?}",
            n + 1,
            fits.len(),
            training.len()
        ));
        let mut trainer = bi_encoder_trainer(plan.base_model, &plan.options, steps)?;
        tune_listwise(
            &mut trainer,
            &states.queries,
            &states.clauses,
            &training,
            &plan.listwise,
            &mut |_, _| {},
        )?;
        for &(scored_fold, outer) in serves {
            let mine: Vec<usize> = (0..entries.len())
                .filter(|&e| fold_of_query[entries[e].0] == scored_fold)
                .collect();
            let text_vectors = embed_some(
                &mut trainer,
                &states.queries,
                mine.iter().map(|&e| entries[e].1),
            )?;
            let clause_vectors = embed_some(
                &mut trainer,
                &states.clauses,
                mine.iter().flat_map(|&e| entries[e].2.iter().copied()),
            )?;
            for &e in &mine {
                let (_, text, ref clause_list) = entries[e];
                let q = &text_vectors[text];
                let cosines = clause_list
                    .iter()
                    .map(|&c| q.iter().zip(&clause_vectors[c]).map(|(a, b)| a * b).sum())
                    .collect();
                values[outer].insert(e, cosines);
            }
        }
    }
    Ok(ColumnOverride { column, values })
}
