//! Fine-tuning the bi-encoder (the model that embeds queries and clauses) on rating files,
//! every wording of a query at once ([`precedent_learn::bi_encoder`]), and writing it as a
//! sentence-transformers folder that `index --model DIR` and `search --model DIR` read.
//!
//! Why here: which ratings make the training lists, and what a tuned folder records about its
//! training, are the model's making; `precedent train-bi-encoder` only parses its flags and
//! prints, and `precedent cv-bi-encoder` reads the same lists ([`rated_lists`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use precedent_formats::{CorpusDoc, Qrels, Query};
use precedent_learn::bi_encoder::{listwise_steps, tune_listwise, ListwisePlan, ListwiseQuery};
use precedent_models::{BiEncoderTrainer, FineTuneOptions, FrozenState};
use serde::Serialize;

use crate::cross_encoder_training::TRAINING_RECORD;
use crate::Report;

/// Rated queries as the bi-encoder trainer reads them, and the texts behind its indices.
pub struct RatedLists {
    /// Every query with ratings, in the first query file's order.
    pub queries: Vec<ListwiseQuery>,
    /// The wordings' names, in query-file order; query `q`'s `k`-th wording is
    /// `query_texts[q.wordings[k]]`.
    pub wordings: Vec<String>,
    pub query_texts: Vec<String>,
    /// The judged clauses of any rated query, in corpus order.
    pub clause_ids: Vec<String>,
    pub clause_texts: Vec<String>,
}

/// Joins wordings of the same queries (`(wording name, queries)`, same ids in each), the
/// corpus and the ratings into training lists. Judgements of clauses the corpus does not
/// have are skipped; a query without any judgement is left out.
pub fn rated_lists(
    corpus: &[CorpusDoc],
    wordings: &[(String, Vec<Query>)],
    qrels: &Qrels,
) -> Result<RatedLists> {
    let Some((_, first)) = wordings.first() else {
        bail!("give at least one query file");
    };
    let row_of: HashMap<&str, usize> = corpus
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let rated: Vec<&str> = first
        .iter()
        .map(|q| q.id.as_str())
        .filter(|id| {
            qrels
                .judged(id)
                .is_some_and(|j| j.keys().any(|d| row_of.contains_key(d.as_str())))
        })
        .collect();
    if rated.is_empty() {
        bail!("no query of the query files has ratings of a clause of the corpus");
    }
    let mut judged_rows = BTreeSet::new();
    for id in &rated {
        if let Some(judged) = qrels.judged(id) {
            judged_rows.extend(
                judged
                    .keys()
                    .filter_map(|d| row_of.get(d.as_str()).copied()),
            );
        }
    }
    let judged_rows: Vec<usize> = judged_rows.into_iter().collect();
    let clause_index: HashMap<usize, usize> = judged_rows
        .iter()
        .enumerate()
        .map(|(i, &row)| (row, i))
        .collect();
    let mut query_texts = Vec::new();
    let mut queries = Vec::new();
    for id in &rated {
        let start = query_texts.len();
        for (name, qs) in wordings {
            let q = qs
                .iter()
                .find(|q| q.id == *id)
                .with_context(|| format!("query {id:?} has no {name:?} wording"))?;
            query_texts.push(q.text.clone());
        }
        let mut judged: Vec<(usize, i32)> = qrels
            .judged(id)
            .map(|j| {
                j.iter()
                    .filter_map(|(d, &l)| {
                        let row = row_of.get(d.as_str())?;
                        Some((*clause_index.get(row)?, l))
                    })
                    .collect()
            })
            .unwrap_or_default();
        judged.sort_unstable();
        queries.push(ListwiseQuery {
            id: (*id).to_owned(),
            wordings: (start..query_texts.len()).collect(),
            judged,
        });
    }
    Ok(RatedLists {
        queries,
        wordings: wordings.iter().map(|(w, _)| w.clone()).collect(),
        query_texts,
        clause_ids: judged_rows.iter().map(|&r| corpus[r].id.clone()).collect(),
        clause_texts: judged_rows
            .iter()
            .map(|&r| precedent_library::indexed_text(&corpus[r]))
            .collect(),
    })
}

/// What the frozen layers make of every query text and judged clause of `lists`, computed
/// once by `trainer` (the states do not depend on what the top layers learn).
pub struct ListStates {
    pub queries: Vec<FrozenState>,
    pub clauses: Vec<FrozenState>,
}

impl ListStates {
    pub fn compute(trainer: &mut BiEncoderTrainer, lists: &RatedLists) -> Result<Self> {
        fn strs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        Ok(Self {
            queries: trainer.frozen_states(&strs(&lists.query_texts))?,
            clauses: trainer.frozen_states(&strs(&lists.clause_texts))?,
        })
    }
}

/// The measured recipe's fine-tuning options (docs/ranking.md): the top layer of
/// all-MiniLM-L6-v2 trains at a peak rate of 1e-4, texts cut at its 256-token window,
/// embedded 32 at a time.
pub fn recipe_options(seed: u64) -> FineTuneOptions {
    FineTuneOptions {
        learning_rate: 1e-4,
        max_len: 256,
        batch_size: 32,
        frozen_layers: 5,
        seed,
        ..FineTuneOptions::default()
    }
}

/// A trainer started from `base_model` whose schedule runs `steps` steps.
pub fn bi_encoder_trainer(
    base_model: &str,
    options: &FineTuneOptions,
    steps: usize,
) -> Result<BiEncoderTrainer> {
    BiEncoderTrainer::from_encoder(
        base_model,
        FineTuneOptions {
            steps: steps.max(1),
            ..options.clone()
        },
    )
    .with_context(|| format!("loading the encoder {base_model}"))
}

/// A fine-tuning run on every rated query.
pub struct BiEncoderPlan<'a> {
    pub base_model: &'a str,
    /// Recorded in the folder, for the refusal of `eval` to score the queries it learnt from.
    pub rating_files: &'a [PathBuf],
    pub out: &'a Path,
    pub options: FineTuneOptions,
    pub listwise: ListwisePlan,
}

#[derive(Serialize)]
struct BiEncoderRecord<'a> {
    base_model: &'a str,
    rating_files: Vec<String>,
    /// Query ids whose ratings were trained on, sorted (read back by
    /// [`crate::cross_encoder_training::check_no_overlap`]).
    trained_on: Vec<String>,
    options: &'a FineTuneOptions,
    listwise: &'a ListwisePlan,
    wordings: &'a [String],
    epoch_losses: &'a [f32],
    seconds: f64,
}

/// What a fine-tuning run did.
pub struct BiEncoderTuned {
    pub steps: usize,
    pub epoch_losses: Vec<f32>,
    pub seconds: f64,
}

/// Fine-tunes `plan.base_model` on every query of `lists` and saves it to `plan.out` with its
/// training record (replacing a previous folder only once the new one is whole).
pub fn train_bi_encoder(
    lists: &RatedLists,
    plan: &BiEncoderPlan<'_>,
    report: &dyn Report,
) -> Result<BiEncoderTuned> {
    let started = Instant::now();
    let training: Vec<&ListwiseQuery> = lists.queries.iter().collect();
    let steps = listwise_steps(&training, &plan.listwise);
    if steps == 0 {
        bail!("no rated query has a clause rated above one star: nothing to learn from");
    }
    let mut trainer = bi_encoder_trainer(plan.base_model, &plan.options, steps)?;
    report.note(&format!(
        "frozen states of {} query texts and {} judged clauses",
        lists.query_texts.len(),
        lists.clause_texts.len()
    ));
    let states = ListStates::compute(&mut trainer, lists)?;
    report.start("fine-tuning", steps as u64);
    let epoch_losses = tune_listwise(
        &mut trainer,
        &states.queries,
        &states.clauses,
        &training,
        &plan.listwise,
        &mut |_, _| report.advance(1),
    )?;
    report.finish();
    let seconds = started.elapsed().as_secs_f64();
    let mut trained_on: Vec<String> = lists.queries.iter().map(|q| q.id.clone()).collect();
    trained_on.sort_unstable();
    let record = BiEncoderRecord {
        base_model: plan.base_model,
        rating_files: plan
            .rating_files
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        trained_on,
        options: trainer.options(),
        listwise: &plan.listwise,
        wordings: &lists.wordings,
        epoch_losses: &epoch_losses,
        seconds,
    };
    let record = serde_json::to_vec_pretty(&record)?;
    trainer
        .save(plan.out, &[(TRAINING_RECORD, &record)])
        .with_context(|| format!("saving the bi-encoder to {}", plan.out.display()))?;
    Ok(BiEncoderTuned {
        steps,
        epoch_losses,
        seconds,
    })
}
