//! `precedent train`: learn the ranking stage from rating files (and cross-validate it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_engine::{
    lazy_clause_type_reader, PipelineContext, Rankers, HYBRID_WITH_TYPES, LEARNED,
};
use precedent_formats::Qrels;
use precedent_learn::cv::{cross_validate, Variant};
use precedent_learn::{
    ClauseTypeReader, CuadTypeProfiles, LearnedModel, RankObjective, RatedQuery, TrainOptions,
    TrainingData,
};
use precedent_library::{Library, Progress};

use crate::{load_embedder, open_or_build, Bars, VectorArgs};

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
    /// With --cv: estimate the rule selection honestly: inside each outer fold, an inner
    /// cross-validation over its training queries decides which query rules to switch off, by
    /// the protocol --rule-ablation prints; the outer folds score the result.
    /// Prints the nested figure next to the model with every rule (about K+1 times a --cv run).
    #[arg(long, conflicts_with_all = ["ablation", "rule_ablation"])]
    nested_rules: bool,
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
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Leave a feature group out (repeatable): bm25, jargon-expansion, dense, phrases+coverage,
    /// clause-length, category-centroids, category-classifier, cuad-types, rating-memory. The
    /// model remembers it and blanks the group when ranking too; `--without rating-memory`
    /// makes a ranker for libraries nobody rated (contracts you ingested).
    #[arg(long)]
    without: Vec<String>,
    /// Rank without a query rule (repeatable; `--without-rule all` for none of them): exclusion,
    /// inclusion, stance, scope-limits, claim-source, claim-breadth, renewal, cap,
    /// damages-waiver, clause-types. The model remembers it and ranks without them when serving.
    #[arg(long = "without-rule")]
    without_rules: Vec<String>,
    /// With --cv and several --queries wordings: the wordings the training folds learn from
    /// (comma-separated, e.g. `short`); default all. Held-out queries are scored in every
    /// wording either way.
    #[arg(long, value_delimiter = ',')]
    train_wordings: Vec<String>,
    /// With --cv: also score each fold's model on this library (built by `ingest` from the
    /// contracts the rated clauses were cut from), next to hybrid+types, with the judgements
    /// `map-qrels` carried over to it (--cv-library-qrels).
    #[arg(long, requires = "cv", requires = "cv_library_qrels")]
    cv_library: Option<PathBuf>,
    /// Judgements over --cv-library's clause ids (`precedent map-qrels --out`).
    #[arg(long, requires = "cv_library")]
    cv_library_qrels: Option<PathBuf>,
}

/// Where learning from ratings reads its inputs (shared by `train` and `eval-judge`).
#[derive(Args)]
pub(crate) struct RatedArgs {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    #[arg(long)]
    corpus: PathBuf,
    /// Queries (BEIR queries.jsonl; ACORD's `metadata.category` is used when present). Repeat
    /// to give several wordings of the same queries (same ids, so the same ratings), e.g.
    /// ACORD's queries.jsonl, queries_medium.jsonl and queries_long.jsonl: training learns from
    /// every wording, and --cv scores each wording and their mean.
    #[arg(long, required = true)]
    queries: Vec<PathBuf>,
    /// Rating files (TSV `query-id corpus-id score`, 0..4 = 1..5 stars); repeat to combine, e.g.
    /// train and valid. Never pass the split you will evaluate on.
    #[arg(long, required = true)]
    pub qrels: Vec<PathBuf>,
    /// Library to use; by default the one `precedent eval` builds under `.precedent/eval/`.
    #[arg(long)]
    index: Option<PathBuf>,
    /// CUAD folder (`master_clauses.csv` + `full_contract_txt/`) whose annotated spans give the
    /// CUAD clause-type evidence; default: `data/cuad` found walking up from here (the shared
    /// data). Without it the CUAD-type features are zero, and training says so.
    #[arg(long)]
    cuad: Option<PathBuf>,
    /// Annotated spans per CUAD type averaged into its profile.
    #[arg(long, default_value_t = 40)]
    cuad_spans: usize,
    #[command(flatten)]
    vectors: VectorArgs,
}

pub fn run(args: TrainArgs, bars: &Bars) -> Result<()> {
    if args.out.is_none() && args.cv.is_none() {
        bail!("nothing to do: give --out MODEL_DIR (train) and/or --cv K (cross-validate)");
    }
    let RatedInputs {
        library,
        rated,
        embeddings,
        embedder,
        cuad_types,
        clause_types,
    } = load_rated(&args.rated, bars)?;
    let options = TrainOptions {
        objective: args.objective,
        trees: args.trees,
        max_depth: args.depth,
        learning_rate: args.learning_rate,
        seed: args.seed,
        without: args.without.clone(),
        without_rules: expand_rules(&args.without_rules),
        train_wordings: args.train_wordings.clone(),
        ..TrainOptions::default()
    };
    precedent_learn::cv::group_columns(&options.without).map_err(anyhow::Error::msg)?;
    precedent_learn::features::check_rule_names(&options.without_rules)
        .map_err(anyhow::Error::msg)?;
    if args.out.is_some() && !args.train_wordings.is_empty() {
        // Training for a model file uses the wordings it is given; --train-wordings is a CV knob.
        bail!("--train-wordings applies to --cv; give the model's wordings as --queries files");
    }
    let data = TrainingData {
        rated: &rated,
        embeddings: &embeddings,
        cuad_types: cuad_types.as_ref(),
        clause_types: Some(&clause_types),
    };
    let wordings = precedent_learn::cv::wordings_of(&rated);
    eprintln!(
        "{} rated queries in {} wording(s) ({}), {} ratings",
        rated.len() / wordings.len().max(1),
        wordings.len(),
        wordings.join(", "),
        rated.iter().map(|q| q.ratings.len()).sum::<usize>() / wordings.len().max(1)
    );
    if let Some(folds) = args.cv {
        let variants = if args.ablation {
            Variant::ablation_study()
        } else {
            let mut variants = vec![
                Variant::Feature {
                    name: "hybrid rrf alone".into(),
                    column: 5,
                },
                Variant::full(),
            ];
            if args.rule_ablation {
                variants.extend(Variant::rule_ablation());
            }
            variants
        };
        // Every learned variant leaves out the --without groups; the full model's name says so.
        let variants: Vec<Variant> = variants
            .into_iter()
            .map(|v| match v {
                Variant::Learned {
                    name,
                    dropped,
                    feedback,
                    rules_off,
                } if !args.without.is_empty() && dropped.is_empty() && feedback => {
                    Variant::Learned {
                        name: name.replace(
                            "all features",
                            &format!("without {}", args.without.join(", ")),
                        ),
                        dropped,
                        feedback,
                        rules_off,
                    }
                }
                v => v,
            })
            .collect();
        let report = if args.nested_rules {
            let (report, fold_rules_off) = precedent_learn::cv::cross_validate_nested(
                &library,
                &data,
                folds,
                &options,
                |msg| bars.note(msg),
            )?;
            for (fold, off) in fold_rules_off.iter().enumerate() {
                println!(
                    "outer fold {}: rules switched off by the inner CV: {}",
                    fold + 1,
                    precedent_learn::cv::describe_rules(off)
                );
            }
            report
        } else {
            cross_validate(&library, &data, folds, &options, &variants, |msg| {
                bars.note(msg)
            })?
        };
        print!("{}", report.table());
        if args.rule_ablation || args.ablation {
            let off = precedent_learn::cv::rules_to_switch_off(&report);
            println!(
                "rules the protocol switches off (removal does not lower the mean NDCG@5, or raises a wording's by more than {:.1}): {}",
                100.0 * precedent_learn::cv::RULE_WORDING_TOLERANCE,
                precedent_learn::cv::describe_rules(&off)
            );
        }
        println!("({:.0} s)", report.seconds);
        if let Some(path) = &args.json_out {
            std::fs::write(path, serde_json::to_string_pretty(&report)?)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("report written to {}", path.display());
        }
        if let (Some(dir), Some(qrels)) = (&args.cv_library, &args.cv_library_qrels) {
            let embedder = Arc::new(load_embedder(
                &library
                    .vectors_info()
                    .map(|i| i.model_source.clone())
                    .unwrap_or_else(|| args.rated.vectors.model.clone()),
            )?);
            cross_validate_on_library(
                &library, &data, &embedder, folds, &options, dir, qrels, bars,
            )?;
        }
    }
    if let Some(out) = &args.out {
        bars.start("features of training queries", rated.len() as u64);
        let model = precedent_learn::train(
            &library,
            &data,
            embedder.model_id(),
            args.rated
                .qrels
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            &options,
            |_, _| bars.advance(1),
        )?;
        bars.finish();
        model.save(out)?;
        // The manifest counts query texts (one per query and wording); say both.
        let per_wording = wordings.len().max(1);
        eprintln!(
            "model written to {} ({} queries in {} wording(s), {} ratings, {:.1} s)",
            out.display(),
            model.manifest.training_queries / per_wording,
            per_wording,
            model.manifest.training_ratings / per_wording,
            model.manifest.train_seconds
        );
    }
    Ok(())
}

/// `train --cv K --cv-library LIB`: each fold's model (trained on the rated library, as `--cv`
/// trains it) ranks LIB's whole clause set for the fold's held-out queries, scored with LIB's
/// judgements (`map-qrels`, condensed protocol); hybrid+types ranks the same queries. Says how a
/// ranker trained on hand-cut clauses does on a library cut from contracts.
#[allow(clippy::too_many_arguments)]
fn cross_validate_on_library(
    library: &Arc<Library>,
    data: &TrainingData<'_>,
    embedder: &Arc<precedent_models::Embedder>,
    folds: usize,
    options: &TrainOptions,
    target_dir: &std::path::Path,
    qrels_path: &std::path::Path,
    bars: &Bars,
) -> Result<()> {
    let target = Arc::new(Library::open(target_dir)?);
    if target.vectors_info().is_none() {
        bail!(
            "{} has no clause vectors: ingest it without --no-vectors",
            target_dir.display()
        );
    }
    let qrels = precedent_formats::read_qrels(qrels_path)?;
    let rated = data.rated;
    // Scored in the first wording given (the library's judgements are per query id).
    let first_wording = rated.first().map(|q| q.wording.clone()).unwrap_or_default();
    let queries: Vec<precedent_formats::Query> = rated
        .iter()
        .filter(|q| q.wording == first_wording)
        .map(|q| precedent_formats::Query {
            id: q.id.clone(),
            text: q.text.clone(),
            category: q.category.clone(),
            split: None,
            metadata: serde_json::Value::Null,
        })
        .collect();
    // Folds by query id, as `train --cv` draws them (every wording of a query in one fold).
    let ids = precedent_learn::cv::distinct_ids(rated);
    let fold_of = precedent_learn::cv::assign_folds(&ids, folds, options.seed);
    let subset = |keep: &dyn Fn(&str) -> bool| -> Qrels {
        let mut out = Qrels::new();
        for (query, judged) in qrels.iter().filter(|(q, _)| keep(q)) {
            for (doc, &label) in judged {
                out.insert(query, doc, label);
            }
        }
        out
    };
    let eval_options = precedent_eval::EvalOptions::default();
    let clause_types = data.clause_types.cloned();
    let mut learned: Vec<precedent_eval::QueryResult> = Vec::new();
    for fold in 0..folds {
        bars.note(&format!(
            "fold {}/{folds}: training, then ranking {}",
            fold + 1,
            target_dir.display()
        ));
        let train_idx: Vec<usize> = (0..rated.len())
            .filter(|&i| fold_of.get(&rated[i].id) != Some(&fold))
            .collect();
        let fold_rated: Vec<RatedQuery> = train_idx.iter().map(|&i| rated[i].clone()).collect();
        let fold_embeddings: Vec<Vec<f32>> = train_idx
            .iter()
            .map(|&i| data.embeddings[i].clone())
            .collect();
        let fold_data = TrainingData {
            rated: &fold_rated,
            embeddings: &fold_embeddings,
            ..*data
        };
        let model = precedent_learn::train(
            library,
            &fold_data,
            embedder.model_id(),
            Vec::new(),
            options,
            |_, _| {},
        )?;
        let pipeline = precedent_learn::learned_pipeline(
            target.clone(),
            embedder.clone(),
            Arc::new(model),
            500,
            None,
            clause_types.clone(),
        )?;
        let held_out = subset(&|q| fold_of.get(q) == Some(&fold));
        if held_out.num_queries() == 0 {
            continue;
        }
        let evaluation = precedent_eval::evaluate(
            &pipeline,
            &target,
            &queries,
            &held_out,
            &eval_options,
            &precedent_library::NoProgress,
        )?;
        learned.extend(evaluation.per_query);
    }
    let scored: std::collections::HashSet<&str> =
        learned.iter().map(|r| r.query_id.as_str()).collect();
    let baseline_pipeline = precedent_learn::clause_types::with_clause_types(
        precedent_rank::build_pipeline(
            "hybrid",
            target.clone(),
            &precedent_rank::PipelineModels {
                embedder: Some(embedder.clone()),
                ..Default::default()
            },
        )?,
        target.clone(),
        clause_types.context("hybrid+types needs the CUAD clause-type reader")?,
        500,
    );
    let baseline = precedent_eval::evaluate(
        &baseline_pipeline,
        &target,
        &queries,
        &subset(&|q| scored.contains(q)),
        &eval_options,
        &precedent_library::NoProgress,
    )?;
    let learned_mean = precedent_metrics::MeanMetrics::of(learned.iter().map(|r| &r.metrics));
    let pct = |x: Option<f64>| x.map_or("   -".to_string(), |v| format!("{:5.1}", 100.0 * v));
    println!(
        "on {} ({} clauses; judgements {}), {} queries, condensed protocol",
        target_dir.display(),
        target.len(),
        qrels_path.display(),
        learned.len()
    );
    for (name, m) in [
        (HYBRID_WITH_TYPES.to_string(), &baseline.overall),
        (
            match options.without.as_slice() {
                [] => format!("learned, {folds}-fold CV by query"),
                groups => format!(
                    "learned without {}, {folds}-fold CV by query",
                    groups.join(", ")
                ),
            },
            &learned_mean,
        ),
    ] {
        println!(
            "{name:<48} {:>6} {:>6} {:>6} {:>6} {:>6}",
            pct(Some(m.ndcg5)),
            pct(Some(m.ndcg10)),
            pct(m.p5_4star),
            pct(m.p5_5star),
            pct(m.recall100)
        );
    }
    Ok(())
}

/// What learning from ratings starts from: the library (with vectors), the rated queries and
/// their embeddings, the library's bi-encoder, and the CUAD type profiles when CUAD is found.
pub(crate) struct RatedInputs {
    pub library: Arc<Library>,
    pub rated: Vec<RatedQuery>,
    pub embeddings: Vec<Vec<f32>>,
    pub embedder: precedent_models::Embedder,
    pub cuad_types: Option<CuadTypeProfiles>,
    pub clause_types: Arc<dyn ClauseTypeReader>,
}

/// Reads the queries and rating files, opens (or builds) the library, resolves the ratings,
/// embeds the queries with the library's model and builds the CUAD type profiles.
pub(crate) fn load_rated(source: &RatedArgs, bars: &Bars) -> Result<RatedInputs> {
    let wordings = read_wordings(&source.queries)?;
    let qrels = read_all_qrels(&source.qrels)?;
    let fingerprint = crate::fingerprint_file(&source.corpus)?;
    let index_dir = match &source.index {
        Some(dir) => {
            crate::refuse_to_replace(dir, &fingerprint)?;
            dir.clone()
        }
        None => PathBuf::from(".precedent/eval").join(&fingerprint),
    };
    let library = Arc::new(open_or_build(
        &index_dir,
        &source.corpus,
        &fingerprint,
        Some(&source.vectors),
        bars,
    )?);
    let mut rated = Vec::new();
    for (i, (wording, queries)) in wordings.iter().enumerate() {
        let (resolved, warnings) = RatedQuery::resolve(&library, queries, &qrels)?;
        // The same ratings resolve the same way for every wording: warn once.
        if i == 0 {
            for w in &warnings {
                eprintln!("warning: {w}");
            }
        }
        rated.extend(resolved.into_iter().map(|q| RatedQuery {
            wording: if wordings.len() > 1 {
                wording.clone()
            } else {
                String::new()
            },
            ..q
        }));
    }
    let spec = library
        .vectors_info()
        .map(|i| i.model_source.clone())
        .unwrap_or_else(|| source.vectors.model.clone());
    let embedder = load_embedder(&spec)?;
    let texts: Vec<&str> = rated.iter().map(|q| q.text.as_str()).collect();
    let embeddings = embedder.embed(&texts)?;
    let cuad_types = cuad_type_profiles(
        source.cuad.clone(),
        source.cuad_spans,
        &embedder,
        &source.vectors.cache,
        bars,
    )?;
    let clause_types: Arc<dyn ClauseTypeReader> = lazy_clause_type_reader(
        source.cuad.clone(),
        precedent_clause_types::cache::default_classifier_cache(),
    );
    Ok(RatedInputs {
        library,
        rated,
        embeddings,
        embedder,
        cuad_types,
        clause_types,
    })
}

/// Reads query files, each one wording of the same queries ([`precedent_formats::wording_of`]).
/// Two files of the same wording, or a file whose ids differ from the first file's, are
/// refused: their figures could not be compared query for query.
pub(crate) fn read_wordings(
    paths: &[PathBuf],
) -> Result<Vec<(String, Vec<precedent_formats::Query>)>> {
    let mut wordings: Vec<(String, Vec<precedent_formats::Query>)> = Vec::new();
    for path in paths {
        let queries = precedent_formats::read_queries(path)?;
        let name = precedent_formats::wording_of(path, &queries);
        if wordings.iter().any(|(w, _)| *w == name) {
            bail!(
                "{}: a second query file of the {name:?} wording; give each wording once",
                path.display()
            );
        }
        if let Some((first, first_queries)) = wordings.first() {
            let ids = |qs: &[precedent_formats::Query]| {
                qs.iter()
                    .map(|q| q.id.clone())
                    .collect::<std::collections::BTreeSet<_>>()
            };
            if ids(&queries) != ids(first_queries) {
                bail!(
                    "{}: its query ids differ from those of the {first:?} wording; wordings of the same queries share ids",
                    path.display()
                );
            }
        }
        wordings.push((name, queries));
    }
    Ok(wordings)
}

/// `--without-rule` values, with `all` standing for every query rule.
fn expand_rules(rules: &[String]) -> Vec<String> {
    if rules.iter().any(|r| r == "all") {
        precedent_learn::features::QUERY_RULES
            .iter()
            .map(|r| r.to_string())
            .collect()
    } else {
        rules.to_vec()
    }
}

/// CUAD clause-type profiles from the annotated spans, embedded through the embedding cache
/// (the second training costs nothing). `None` (with a warning) when no CUAD folder is found.
fn cuad_type_profiles(
    dir: Option<PathBuf>,
    per_type: usize,
    embedder: &precedent_models::Embedder,
    cache_dir: &std::path::Path,
    bars: &Bars,
) -> Result<Option<CuadTypeProfiles>> {
    let Some(dir) = dir.or_else(precedent_clause_types::cache::find_cuad_dir) else {
        eprintln!(
            "warning: no CUAD folder found (give --cuad DIR); the CUAD clause-type features will be zero"
        );
        return Ok(None);
    };
    let examples = precedent_learn::category::cuad_type_examples(&dir, per_type)?;
    let texts: Vec<&str> = examples.iter().map(|(_, t)| t.as_str()).collect();
    bars.start("embedding CUAD type examples", texts.len() as u64);
    let options = precedent_models::EmbedOptions::default();
    let done = std::cell::Cell::new(0usize);
    let progress = |n: usize| {
        bars.advance(n.saturating_sub(done.get()) as u64);
        done.set(n.max(done.get()));
    };
    let vectors = match precedent_models::EmbeddingCache::open(cache_dir) {
        Ok(cache) => cache.get_or_compute(embedder, &texts, &options, &progress)?,
        Err(_) => embedder.embed_with(&texts, &options, &progress)?,
    };
    bars.finish();
    Ok(Some(CuadTypeProfiles::from_examples(
        examples
            .iter()
            .zip(&vectors)
            .map(|((name, _), v)| (*name, v.as_slice())),
    )))
}

/// Reads and merges rating files; the same query in two files is refused (ambiguous labels).
pub(crate) fn read_all_qrels(paths: &[PathBuf]) -> Result<Qrels> {
    let mut merged = Qrels::new();
    let mut seen: std::collections::HashMap<String, PathBuf> = Default::default();
    for path in paths {
        let qrels = precedent_formats::read_qrels(path)?;
        if qrels.num_judgements() == 0 {
            bail!("{}: no ratings in this file", path.display());
        }
        for (query, judged) in qrels.iter() {
            if let Some(first) = seen.insert(query.to_owned(), path.clone()) {
                bail!(
                    "query {query:?} is rated in both {} and {}",
                    first.display(),
                    path.display()
                );
            }
            for (doc, label) in judged {
                merged.insert(query, doc, *label);
            }
        }
    }
    Ok(merged)
}

/// Loads the learned model for `eval`/`search`: the named directory, else the default one.
pub fn load_model(dir: Option<&std::path::Path>) -> Result<(PathBuf, Arc<LearnedModel>)> {
    let dir = match dir {
        Some(d) => d.to_owned(),
        None => precedent_learn::default_model_dir().with_context(|| {
            format!(
                "no learned model found: train one with `precedent train --out DIR` and pass --model-dir DIR (the repository ships {})",
                precedent_learn::SHIPPED_MODEL_DIR
            )
        })?,
    };
    let model = LearnedModel::load(&dir)?;
    Ok((dir, Arc::new(model)))
}

/// Where the learned stage comes from (for `search`, `eval` and `bench`).
#[derive(Args, Clone)]
pub struct LearnedArgs {
    /// Learned model directory written by `precedent train`. Default: $PRECEDENT_RANKER, else the
    /// shipped `models/acord-ranker` (found from the current directory upwards).
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
    /// How many hybrid candidates the learned ranker reorders.
    #[arg(long, default_value_t = 500)]
    learned_top: usize,
}

/// Pipelines the engine builds ([`precedent_engine::known_pipelines`]).
pub fn known_pipelines() -> Vec<&'static str> {
    precedent_engine::known_pipelines()
}

/// The learned ranker for `library` and whether it serves it by default: the one named with
/// `--model-dir`, else as the engine chooses for every face ([`Rankers::for_library`]).
pub fn ranker_for(
    library: &Library,
    learned: &LearnedArgs,
) -> Result<(Option<Arc<LearnedModel>>, bool)> {
    Ok(loaded_rankers(learned.model_dir.as_deref())?.for_library(library))
}

/// The rankers for `--model-dir` (or the defaults), loaded once per process: choosing the
/// default pipeline, building it and checking `eval`'s overlap all ask, and each model's rating
/// memory is megabytes of JSON.
fn loaded_rankers(named: Option<&Path>) -> Result<Rankers> {
    static LOADED: std::sync::Mutex<Vec<(Option<PathBuf>, Rankers)>> =
        std::sync::Mutex::new(Vec::new());
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, rankers)) = loaded.iter().find(|(dir, _)| dir.as_deref() == named) {
        return Ok(rankers.clone());
    }
    let rankers = Rankers::load(named).with_context(|| {
        format!(
            "loading the learned ranker {}",
            named.map(|d| d.display().to_string()).unwrap_or_default()
        )
    })?;
    loaded.push((named.map(Path::to_path_buf), rankers.clone()));
    Ok(rankers)
}

/// The pipeline used when none is named, as the engine chooses it for `search`, `bench` and
/// `serve` alike ([`precedent_engine::default_pipeline`]): `learned` where a learned ranker
/// serves the library, else `hybrid+types` (the clause-type rule needs no ratings) with
/// vectors, else `bm25`.
pub fn default_ranking(library: &Library, learned: &LearnedArgs) -> Result<&'static str> {
    let (ranker, serves) = ranker_for(library, learned)?;
    Ok(precedent_engine::default_pipeline(
        library.vectors_info().is_some(),
        ranker.is_some() && serves,
        true,
    ))
}

/// `eval`'s default pipeline over `library`: the one `search` would choose
/// ([`default_ranking`]), except that a learned ranker trained on the queries being scored
/// gives way to `hybrid+types`, saying why.
pub fn default_eval_ranking(
    library: &Library,
    learned: &LearnedArgs,
    qrels: &Qrels,
) -> Result<&'static str> {
    let name = default_ranking(library, learned)?;
    if name == "bm25" {
        eprintln!(
            "note: {} has no clause vectors, so the default pipeline here is bm25",
            library.root().display()
        );
        return Ok(name);
    }
    if name != LEARNED {
        eprintln!(
            "note: no learned ranker was trained for this library, so the default pipeline here is hybrid+types"
        );
        return Ok(name);
    }
    let (ranker, _) = ranker_for(library, learned)?;
    match ranker.map(|model| check_no_overlap(&model, qrels)) {
        Some(Ok(())) => Ok(LEARNED),
        _ => {
            eprintln!(
                "note: the learned ranker was trained on these queries, so the default pipeline here is hybrid+types; use `precedent train --cv 5` for cross-validated learned figures, or a model trained without them (--model-dir)"
            );
            Ok(HYBRID_WITH_TYPES)
        }
    }
}

pub fn needs_embedder(name: &str) -> bool {
    precedent_engine::needs_embedder(name)
}

/// Builds a pipeline by name through the engine ([`precedent_engine::build`]), with the learned
/// ranker [`ranker_for`] chooses; a cross-encoder in `models` reranks last.
pub fn make_pipeline(
    name: &str,
    library: Arc<Library>,
    models: &precedent_rank::PipelineModels,
    learned: &LearnedArgs,
) -> Result<(precedent_rank::Pipeline, Option<Arc<LearnedModel>>)> {
    let ranker = if name == LEARNED {
        let (ranker, _) = ranker_for(&library, learned)?;
        let ranker = ranker.with_context(|| {
            format!(
                "no learned model found: train one with `precedent train --out DIR` and pass --model-dir DIR (the repository ships {})",
                precedent_learn::SHIPPED_MODEL_DIR
            )
        })?;
        Some(ranker)
    } else {
        None
    };
    let context = PipelineContext {
        embedder: models.embedder.clone(),
        ranker: ranker.clone(),
        clause_types: Some(lazy_clause_type_reader(
            None,
            precedent_clause_types::cache::default_classifier_cache(),
        )),
        learned_top: learned.learned_top,
        fusion_weights: models.fusion_weights,
        cross_encoder: models.cross_encoder.clone(),
        rerank_top: models.rerank_top,
        ..PipelineContext::new(library)
    };
    Ok((precedent_engine::build(name, &context)?, ranker))
}

/// The queries of `qrels` among `trained` (those a model learnt from), for the refusals of
/// `eval`: a model scored on its own training queries reports what it memorised.
pub(crate) fn seen_queries<'q, 't>(
    trained: impl IntoIterator<Item = &'t str>,
    qrels: &'q Qrels,
) -> Vec<&'q str> {
    let trained: std::collections::HashSet<&str> = trained.into_iter().collect();
    qrels.query_ids().filter(|q| trained.contains(q)).collect()
}

/// Refuses to score queries the learned model was trained on: its memory holds their ratings.
pub fn check_no_overlap(model: &LearnedModel, qrels: &Qrels) -> Result<()> {
    let overlap = seen_queries(model.memory.queries.iter().map(|q| q.id.as_str()), qrels);
    if !overlap.is_empty() {
        bail!(
            "the learned model was trained on {} of the queries being evaluated (e.g. {:?}; trained on {}): train without them, e.g. `precedent train --qrels train.tsv --out DIR` then `precedent eval --model-dir DIR --qrels valid.tsv`, or use `precedent train --cv 5` for cross-validated figures",
            overlap.len(),
            overlap[0],
            model.manifest.trained_on.join(", ")
        );
    }
    Ok(())
}
