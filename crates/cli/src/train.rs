//! `precedent train`: learn the ranking stage from rating files (and cross-validate it).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_engine::bi_encoder_training::recipe_options;
use precedent_eval::bi_encoder_cv::{cross_fitted_cosines, BiEncoderCvPlan};
use precedent_eval::ranker_cv::{self, CvPlan};
use precedent_learn::bi_encoder::ListwisePlan;
use precedent_learn::{Learner, RankObjective, TrainOptions, TrainingData};

use crate::{Bars, VectorArgs};

#[derive(Args)]
pub struct TrainArgs {
    #[command(flatten)]
    rated: RatedArgs,
    /// Model directory to write (created; replaced file by file, manifest last).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also run K-fold cross-validation by query over the given ratings and print the table.
    #[arg(long)]
    cv: Option<usize>,
    /// With --cv: also score single stages and the ablation of every feature group.
    #[arg(long)]
    ablation: bool,
    /// With --cv: also score the model without any query rule and without each rule in turn
    /// (cheap: the rules act after the trees, so no extra tree is fitted); --ablation includes it.
    #[arg(long)]
    rule_ablation: bool,
    /// With --cv: the honest estimate of the rule selection, made by an inner CV inside each
    /// outer fold, next to the model with every rule (about K+1 times a --cv run).
    #[arg(long, conflicts_with_all = ["ablation", "rule_ablation"])]
    nested_rules: bool,
    /// With --cv: also simulate a lawyer who reads the first five clauses and marks the 4-5
    /// star ones as wanted and the 1-2 star ones as not (`search --like/--unlike`), and score
    /// the ranking of the clauses not yet seen, without and with the marks.
    #[arg(long, conflicts_with = "nested_rules")]
    marks_study: bool,
    /// With --cv: write the full report (per variant, category and query) as JSON.
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Number of boosted trees.
    #[arg(long, default_value_t = TrainOptions::default().trees)]
    trees: usize,
    /// Depth of each tree.
    #[arg(long, default_value_t = TrainOptions::default().max_depth)]
    depth: u32,
    #[arg(long, default_value_t = TrainOptions::default().learning_rate)]
    learning_rate: f32,
    /// Ranking objective: lambdarank (LambdaMART) or squared (pointwise, for comparison).
    #[arg(long, default_value = "lambdarank")]
    objective: RankObjective,
    /// Tree learner of the ranker: boost (precedent-ml's histogram trees), gbdt (the gbdt
    /// crate's exact-split trees) or blend (both, their margins averaged).
    #[arg(long, default_value = "gbdt")]
    learner: Learner,
    /// Grow the trees so that the score never falls as evidence of known direction rises
    /// (BM25, cosine, the rating memory's labels; the list is `precedent_learn::features::
    /// MONOTONE`). Needs `--learner boost`, or `blend` (its histogram half).
    #[arg(long)]
    monotone: bool,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Leave a feature group out (repeatable; the model remembers it): bm25, jargon-expansion,
    /// dense, phrases+coverage, clause-length, category-centroids, category-classifier,
    /// cuad-types, rating-memory (for a ranker of libraries nobody rated).
    #[arg(long)]
    without: Vec<String>,
    /// Rank without a query rule (repeatable; `--without-rule all` for none of them): exclusion,
    /// inclusion, stance, scope-limits, claim-source, claim-breadth, renewal, cap,
    /// damages-waiver, clause-types. The model remembers it and ranks without them when serving.
    #[arg(long = "without-rule")]
    without_rules: Vec<String>,
    /// With --cv and several --queries wordings: the wordings the training folds learn from
    /// (comma-separated, e.g. `short`; default all); held-out queries are scored in every one.
    #[arg(long, value_delimiter = ',')]
    train_wordings: Vec<String>,
    /// Wordings (comma-separated `metadata.format` names of --queries files) that join the
    /// rating memory's vote only: the trees never train on them. For other writers'
    /// rewordings of the rated queries; in --cv a held-out query's texts in them are held out
    /// with it and scored like any wording.
    #[arg(long, value_delimiter = ',')]
    memory_wordings: Vec<String>,
    /// Training lists also hold each training query's first N hybrid candidates that nobody
    /// judged for it, at label 0 (0: the judged clauses only), so the trees see the clauses
    /// serving hands them; see `TrainOptions::served_negatives`.
    #[arg(long, default_value_t = 0)]
    served_negatives: usize,
    /// With --cv: the dense cosine feature comes from the bi-encoder fine-tuned on the
    /// ratings (`train-bi-encoder`'s recipe), cross-fitted so that no value comes from an
    /// encoder that saw its query or the held-out fold (K + K(K-1)/2 fine-tunes).
    #[arg(long, requires = "cv")]
    dense_from_tuned_bi_encoder: bool,
    /// With --cv: also score each fold's model, next to hybrid+types, on this library ingested
    /// from the rated clauses' contracts, with --cv-library-qrels (each --queries wording, and
    /// their mean).
    #[arg(long, requires = "cv", requires = "cv_library_qrels")]
    cv_library: Option<PathBuf>,
    /// Judgements over --cv-library's clause ids (`precedent map-qrels --out`).
    #[arg(long, requires = "cv_library")]
    cv_library_qrels: Option<PathBuf>,
    /// How --cv-library scores its rankings: condensed (ACORD's: only judged clauses are ranked)
    /// or full (the whole served ranking, unjudged clauses irrelevant). On ACORD's own library
    /// the full score mostly measures agreement with the pooling: a query's unjudged clauses
    /// hold many its category's other queries rated relevant (docs/data.md).
    #[arg(long, default_value = "condensed", requires = "cv_library")]
    cv_library_protocol: precedent_eval::Protocol,
    /// Also learn from the rated queries' judgements over this library of ingested contracts,
    /// with --also-learn-from-qrels (`precedent map-qrels --out`): the trees then see the
    /// features as they fall on clauses cut by `ingest`. Cross-validation folds learn from the
    /// judgements of their own training queries only.
    #[arg(long, requires = "also_learn_from_qrels")]
    also_learn_from: Option<PathBuf>,
    /// Judgements over --also-learn-from's clause ids.
    #[arg(long, requires = "also_learn_from")]
    also_learn_from_qrels: Option<PathBuf>,
}

/// Where learning from ratings reads its inputs (shared by `train` and `eval-judge`).
#[derive(Args)]
pub(crate) struct RatedArgs {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    #[arg(long)]
    corpus: PathBuf,
    /// Queries (BEIR queries.jsonl); repeat for several wordings of the same queries (same ids):
    /// training learns from every wording, and --cv scores each wording and their mean.
    #[arg(long, required = true)]
    queries: Vec<PathBuf>,
    /// Rating files (TSV `query-id corpus-id score`, 0..4 = 1..5 stars); repeat to combine, e.g.
    /// train and valid. Never pass the split you will evaluate on.
    #[arg(long, required = true)]
    pub qrels: Vec<PathBuf>,
    /// Library to use; by default the one `precedent eval` builds under `.precedent/eval/`.
    #[arg(long)]
    index: Option<PathBuf>,
    /// CUAD folder whose annotated spans give the clause-type evidence (default: `data/cuad`
    /// found walking up from here); without it those features are zero.
    #[arg(long)]
    cuad: Option<PathBuf>,
    /// Annotated spans per CUAD type averaged into its profile.
    #[arg(long, default_value_t = 40)]
    cuad_spans: usize,
    /// Rank the queries as written: do not correct misspelt words against the library's words
    /// first, as `search` and the API do.
    #[arg(long)]
    no_spelling: bool,
    #[command(flatten)]
    vectors: VectorArgs,
}

pub fn run(args: TrainArgs, bars: &Bars) -> Result<()> {
    if args.out.is_none() && args.cv.is_none() {
        bail!("nothing to do: give --out MODEL_DIR (train) and/or --cv K (cross-validate)");
    }
    let inputs = load_rated(&args.rated, bars)?;
    let library = &inputs.library;
    let options = TrainOptions {
        objective: args.objective,
        learner: args.learner,
        monotone: args.monotone,
        trees: args.trees,
        max_depth: args.depth,
        learning_rate: args.learning_rate,
        seed: args.seed,
        without: args.without.clone(),
        without_rules: ranker_cv::expand_rules(&args.without_rules),
        train_wordings: args.train_wordings.clone(),
        memory_wordings: args.memory_wordings.clone(),
        served_negatives: args.served_negatives,
        ..TrainOptions::default()
    };
    ranker_cv::check_train_options(&options, args.out.is_some())?;
    let also = match (&args.also_learn_from, &args.also_learn_from_qrels) {
        (Some(dir), Some(qrels)) => {
            let judgements = ranker_cv::library_judgements(dir, qrels, bars)?;
            eprintln!(
                "also learning from {} judgements of {} queries over {}",
                judgements.num_judgements(),
                judgements.num_queries(),
                dir.display()
            );
            Some(judgements)
        }
        _ => None,
    };
    let data = TrainingData {
        also: also.as_ref(),
        ..inputs.training_data()
    };
    eprintln!("{}", ranker_cv::describe_rated(&inputs.rated));
    let tuned_cosines = match args.cv {
        Some(folds) if args.dense_from_tuned_bi_encoder => {
            let r = &args.rated;
            let plan = BiEncoderCvPlan {
                corpus: &r.corpus,
                queries: &r.queries,
                qrels: &r.qrels,
                base_model: precedent_models::DEFAULT_MODEL,
                folds,
                fold_seed: args.seed,
                options: recipe_options(args.seed),
                listwise: ListwisePlan {
                    seed: args.seed,
                    ..ListwisePlan::default()
                },
                score_index: None,
                score_qrels: &[],
            };
            let dense_cos = precedent_learn::FEATURE_NAMES
                .iter()
                .position(|n| *n == "dense_cos")
                .context("no dense_cos feature")?;
            Some(cross_fitted_cosines(&plan, &inputs.rated, dense_cos, bars)?)
        }
        _ => None,
    };
    let data = TrainingData {
        column_override: tuned_cosines.as_ref(),
        ..data
    };
    if let Some(folds) = args.cv {
        let plan = CvPlan {
            folds,
            ablation: args.ablation,
            rule_ablation: args.rule_ablation,
            nested_rules: args.nested_rules,
            marks: args.marks_study,
        };
        let outcome = ranker_cv::cross_validate_ranker(library, &data, &plan, &options, bars)?;
        print!("{}", outcome.text());
        let report = outcome.report;
        if let Some(path) = &args.json_out {
            std::fs::write(path, serde_json::to_string_pretty(&report)?)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("report written to {}", path.display());
        }
        if let (Some(dir), Some(qrels)) = (&args.cv_library, &args.cv_library_qrels) {
            let embedder = ranker_cv::library_embedder(library, args.rated.vectors.model())?;
            let on_library = ranker_cv::cross_validate_on_library(
                library,
                &data,
                &embedder,
                folds,
                &options,
                dir,
                qrels,
                args.cv_library_protocol,
                bars,
            )?;
            print!("{}", on_library.table(dir, qrels));
        }
    }
    if let Some(out) = &args.out {
        let files = args
            .rated
            .qrels
            .iter()
            .chain(&args.also_learn_from_qrels)
            .map(|p| p.display().to_string());
        let written = ranker_cv::train_and_save(
            library,
            &data,
            &inputs.embedder,
            files.collect(),
            &options,
            out,
            bars,
        )?;
        eprintln!("{written}");
    }
    Ok(())
}

pub(crate) use ranker_cv::{read_all_qrels, read_wordings, RatedInputs};

/// Reads the queries and ratings, opens (or builds) the library and embeds the queries
/// ([`ranker_cv::load_rated`]).
pub(crate) fn load_rated(source: &RatedArgs, bars: &Bars) -> Result<RatedInputs> {
    let resolved = source.vectors.clone().reusing(source.index.as_deref());
    let vectors = || resolved.plan();
    let rated = ranker_cv::RatedSource {
        corpus: &source.corpus,
        queries: &source.queries,
        qrels: &source.qrels,
        index: source.index.as_deref(),
        cuad: source.cuad.clone(),
        cuad_spans: source.cuad_spans,
        vectors: &vectors,
        model: resolved.model(),
        cache: &resolved.cache,
        spelling: !source.no_spelling,
    };
    ranker_cv::load_rated(&rated, bars)
}
