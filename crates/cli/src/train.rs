//! `precedent train`: learn the ranking stage from rating files (and cross-validate it).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_formats::Qrels;
use precedent_learn::clause_types::HYBRID_WITH_TYPES;
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
}

/// Where learning from ratings reads its inputs (shared by `train` and `eval-judge`).
#[derive(Args)]
pub(crate) struct RatedArgs {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    #[arg(long)]
    corpus: PathBuf,
    /// Queries (BEIR queries.jsonl; ACORD's `metadata.category` is used when present).
    #[arg(long)]
    queries: PathBuf,
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
        ..TrainOptions::default()
    };
    let data = TrainingData {
        rated: &rated,
        embeddings: &embeddings,
        cuad_types: cuad_types.as_ref(),
        clause_types: Some(&clause_types),
    };
    eprintln!(
        "{} rated queries, {} ratings",
        rated.len(),
        rated.iter().map(|q| q.ratings.len()).sum::<usize>()
    );
    if let Some(folds) = args.cv {
        let variants = if args.ablation {
            Variant::ablation_study()
        } else {
            vec![
                Variant::Feature {
                    name: "hybrid rrf alone".into(),
                    column: 5,
                },
                Variant::full(),
            ]
        };
        let report = cross_validate(&library, &data, folds, &options, &variants, |msg| {
            bars.note(msg)
        })?;
        print!("{}", report.table());
        println!("({:.0} s)", report.seconds);
        if let Some(path) = &args.json_out {
            std::fs::write(path, serde_json::to_string_pretty(&report)?)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("report written to {}", path.display());
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
        eprintln!(
            "model written to {} ({} queries, {} ratings, {:.1} s)",
            out.display(),
            model.manifest.training_queries,
            model.manifest.training_ratings,
            model.manifest.train_seconds
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
    let queries = precedent_formats::read_queries(&source.queries)?;
    let qrels = read_all_qrels(&source.qrels)?;
    let fingerprint = crate::fingerprint_file(&source.corpus)?;
    let index_dir = match &source.index {
        Some(dir) => dir.clone(),
        None => PathBuf::from(".precedent/eval").join(&fingerprint),
    };
    let library = Arc::new(open_or_build(
        &index_dir,
        &source.corpus,
        &fingerprint,
        Some(&source.vectors),
        bars,
    )?);
    let (rated, warnings) = RatedQuery::resolve(&library, &queries, &qrels)?;
    for w in &warnings {
        eprintln!("warning: {w}");
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
        precedent_cuad::cache::default_classifier_cache(),
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

/// The single-clause classifier that reads clauses' CUAD types for queries naming one
/// ([`precedent_learn::clause_types`]; `ClassifierOptions::for_acord`, the one the shipped
/// ranker was trained with, which differs from `review`'s in its negatives), from the CUAD folder `dir`
/// (else the one found), loaded on the first query that names a clause type, so searches,
/// trainings and cross-validations whose queries name none never load its 44 MB. Trained on
/// first use (about a minute) and cached under `.precedent/cache/clause-classifier` (in the
/// project state directory, `precedent_paths::state_path`; `serve` passes its
/// `--classifier-cache`). Without a CUAD folder it warns once and such queries rank without it.
/// `search`, `eval`, `train` and `serve` all read clause types through this one reader, so a
/// query ranks the same from the command line and from the server.
pub(crate) fn lazy_clause_type_reader(
    dir: Option<PathBuf>,
    cache: PathBuf,
) -> Arc<precedent_learn::clause_types::LazyClauseTypes> {
    Arc::new(precedent_learn::clause_types::LazyClauseTypes::new(
        Box::new(move || {
            let dir = dir
                .clone()
                .or_else(precedent_cuad::cache::find_cuad_dir)
                .ok_or("no CUAD folder found (give --cuad DIR or set PRECEDENT_CUAD_DIR)")?;
            let classifier = precedent_cuad::cache::load_or_train_classifier(
                &dir,
                &cache,
                &precedent_cuad::clause_classifier::ClassifierOptions::for_acord(),
                || {
                    eprintln!(
                        "training the clause classifier from {} (once; cached in {})",
                        dir.display(),
                        cache.display()
                    )
                },
            )
            .map_err(|e| {
                format!(
                    "training the clause classifier from {}: {e:#}",
                    dir.display()
                )
            })?;
            Ok(Arc::new(classifier) as Arc<dyn ClauseTypeReader>)
        }),
    ))
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
    let Some(dir) = dir.or_else(precedent_cuad::cache::find_cuad_dir) else {
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
fn read_all_qrels(paths: &[PathBuf]) -> Result<Qrels> {
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

/// Pipelines the CLI knows: the engine's, plus `learned` (hybrid + learned ranker).
pub fn known_pipelines() -> Vec<&'static str> {
    let mut names = precedent_rank::PIPELINES.to_vec();
    names.push("learned");
    names.push(HYBRID_WITH_TYPES);
    names
}

/// The pipeline used when none is named: `learned` when the library has vectors and either a
/// model is named (`--model-dir`) or the default model fits the library (holds the clauses it
/// was trained on, [`LearnedModel::library_fit`]; not so for ingested contracts), else
/// `hybrid+types` with vectors (the clause-type rule needs no ratings), else `bm25`.
/// `precedent serve` chooses the same way.
pub fn default_pipeline(library: &Library, learned: &LearnedArgs) -> &'static str {
    if library.vectors_info().is_none() {
        return "bm25";
    }
    let fits = || {
        precedent_learn::default_model_dir()
            .and_then(|dir| LearnedModel::load(&dir).ok())
            .is_some_and(|m| m.library_fit(library) >= precedent_learn::MIN_LIBRARY_FIT)
    };
    if learned.model_dir.is_some() || fits() {
        "learned"
    } else {
        HYBRID_WITH_TYPES
    }
}

/// `eval`'s default: `learned` when a model is available and was not trained on the queries
/// being scored; otherwise `hybrid+types`, saying why.
pub fn default_eval_pipeline(learned: &LearnedArgs, qrels: &Qrels) -> &'static str {
    let dir = learned
        .model_dir
        .clone()
        .or_else(precedent_learn::default_model_dir);
    let Some(dir) = dir else {
        return HYBRID_WITH_TYPES;
    };
    match LearnedModel::load(&dir) {
        Ok(model) => match check_no_overlap(&model, qrels) {
            Ok(()) => "learned",
            Err(_) => {
                eprintln!(
                    "note: the learned model {} was trained on these queries, so the default pipeline here is hybrid+types; use `precedent train --cv 5` for cross-validated learned figures, or a model trained without them (--model-dir)",
                    dir.display()
                );
                HYBRID_WITH_TYPES
            }
        },
        Err(e) => {
            eprintln!(
                "note: learned model unusable ({e}); the default pipeline here is hybrid+types"
            );
            HYBRID_WITH_TYPES
        }
    }
}

pub fn needs_embedder(name: &str) -> bool {
    name == "learned" || precedent_rank::needs_embedder(name.strip_suffix("+types").unwrap_or(name))
}

/// Builds a pipeline by name, including `learned`; a cross-encoder in `models` reranks last.
pub fn make_pipeline(
    name: &str,
    library: Arc<Library>,
    models: &precedent_rank::PipelineModels,
    learned: &LearnedArgs,
) -> Result<(precedent_rank::Pipeline, Option<Arc<LearnedModel>>)> {
    if let Some(base) = name.strip_suffix("+types") {
        let pipeline = precedent_learn::clause_types::with_clause_types(
            precedent_rank::build_pipeline(base, library.clone(), models)?,
            library,
            lazy_clause_type_reader(None, precedent_cuad::cache::default_classifier_cache()),
            learned.learned_top,
        );
        return Ok((pipeline, None));
    }
    if name != "learned" {
        return Ok((precedent_rank::build_pipeline(name, library, models)?, None));
    }
    let embedder = models
        .embedder
        .clone()
        .context("the learned pipeline needs the library's bi-encoder")?;
    let (dir, model) = load_model(learned.model_dir.as_deref())?;
    tracing::info!("learned model {}", dir.display());
    let mut pipeline = precedent_learn::learned_pipeline(
        library.clone(),
        embedder,
        model.clone(),
        learned.learned_top,
        models.fusion_weights,
        Some(lazy_clause_type_reader(
            None,
            precedent_cuad::cache::default_classifier_cache(),
        )),
    )?;
    if let Some(cross) = &models.cross_encoder {
        pipeline = pipeline.then(
            Box::new(precedent_rank::CrossEncoderReranker::new(
                library,
                cross.clone(),
            )),
            models.rerank_top.max(1),
        );
    }
    Ok((pipeline, Some(model)))
}

/// Refuses to score queries the learned model was trained on: its memory holds their ratings.
pub fn check_no_overlap(model: &LearnedModel, qrels: &Qrels) -> Result<()> {
    let trained: std::collections::HashSet<&str> =
        model.memory.queries.iter().map(|q| q.id.as_str()).collect();
    let overlap: Vec<&str> = qrels.query_ids().filter(|q| trained.contains(q)).collect();
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
