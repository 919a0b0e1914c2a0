//! Learning the ranking stage from rating files, and cross-validating it: what `precedent
//! train` and `precedent eval-judge` compute, apart from their flags and their printing.
//!
//! Why here: reading several wordings of the same queries, resolving and merging rating files,
//! the CUAD type profiles, the variants a cross-validation scores (single stages, feature and
//! rule ablations, the nested rule selection) and the scoring of each fold's model on a library
//! cut from contracts are how the ranker is measured; a face only chooses and prints.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use precedent_engine::library_setup::{self, VectorPlan};
use precedent_engine::pipeline_choice;
use precedent_engine::{lazy_clause_type_reader, Report, HYBRID_WITH_TYPES, LEARNED};
use precedent_formats::{Qrels, Query};
use precedent_learn::cv::{cross_validate, rule_choices, ByLine, CvReport, FoldRules, Variant};
use precedent_learn::{
    ClauseTypeReader, CuadTypeProfiles, LearnedModel, LibraryJudgements, RatedQuery, TrainOptions,
    TrainingData,
};
use precedent_library::Library;
use precedent_metrics::MeanMetrics;
use precedent_models::Embedder;

/// Where learning from ratings reads its inputs.
pub struct RatedSource<'a> {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    pub corpus: &'a Path,
    /// Query files, each one wording of the same queries.
    pub queries: &'a [PathBuf],
    /// Rating files, merged ([`read_all_qrels`]).
    pub qrels: &'a [PathBuf],
    /// Library to use; by default the one `precedent eval` builds under `.precedent/eval/`.
    pub index: Option<&'a Path>,
    /// CUAD folder for the CUAD clause-type evidence; default: found walking up from here.
    pub cuad: Option<PathBuf>,
    /// Annotated spans per CUAD type averaged into its profile.
    pub cuad_spans: usize,
    /// How the library's clause vectors are built when it is built here (asked once the
    /// queries, ratings and corpus have been read).
    pub vectors: &'a dyn Fn() -> Result<VectorPlan<'a>>,
    /// The bi-encoder to embed queries with when the library records none.
    pub model: &'a str,
    /// Embedding cache directory.
    pub cache: &'a Path,
    /// Correct the queries' misspelt words as the engine does for a search
    /// ([`precedent_engine::spelling`]), so that cross-validation ranks what serving ranks.
    pub spelling: bool,
}

/// What learning from ratings starts from: the library (with vectors), the rated queries and
/// their embeddings, the library's bi-encoder, and the CUAD type profiles when CUAD is found.
pub struct RatedInputs {
    pub library: Arc<Library>,
    pub rated: Vec<RatedQuery>,
    pub embeddings: Vec<Vec<f32>>,
    pub embedder: Embedder,
    pub cuad_types: Option<CuadTypeProfiles>,
    pub clause_types: Arc<dyn ClauseTypeReader>,
}

impl RatedInputs {
    /// What training and cross-validation read of these inputs.
    pub fn training_data(&self) -> TrainingData<'_> {
        TrainingData {
            rated: &self.rated,
            embeddings: &self.embeddings,
            cuad_types: self.cuad_types.as_ref(),
            clause_types: Some(&self.clause_types),
            also: None,
            column_override: None,
        }
    }
}

/// Reads the queries and rating files, opens (or builds) the library, resolves the ratings,
/// embeds the queries with the library's model and builds the CUAD type profiles.
pub fn load_rated(source: &RatedSource<'_>, report: &dyn Report) -> Result<RatedInputs> {
    let wordings = read_wordings(source.queries)?;
    let qrels = read_all_qrels(source.qrels)?;
    let library = Arc::new(library_setup::corpus_library(
        source.corpus,
        source.index,
        Some(source.vectors),
        report,
    )?);
    let mut rated = Vec::new();
    for (i, (wording, queries)) in wordings.iter().enumerate() {
        let (resolved, warnings) = RatedQuery::resolve(&library, queries, &qrels)?;
        // The same ratings resolve the same way for every wording: warn once.
        if i == 0 {
            for w in &warnings {
                report.warn(&format!("warning: {w}"));
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
        .unwrap_or_else(|| source.model.to_owned());
    let embedder = library_setup::load_embedder(&spec)?;
    if source.spelling {
        let corrected = precedent_engine::spelling::correct_in_place(
            &library,
            Some(&embedder),
            rated.iter_mut().map(|q| &mut q.text),
        )?;
        if corrected > 0 {
            report.note(&format!(
                "spelling: corrected {corrected} of {} query texts (--no-spelling ranks them as written)",
                rated.len()
            ));
        }
    }
    let texts: Vec<&str> = rated.iter().map(|q| q.text.as_str()).collect();
    let embeddings = embedder.embed(&texts)?;
    let cuad_types = cuad_type_profiles(
        source.cuad.clone(),
        source.cuad_spans,
        &embedder,
        source.cache,
        report,
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

/// `train --also-learn-from DIR --also-learn-from-qrels FILE`: the rated queries' judgements
/// over a library of ingested contracts (`map-qrels` output), to learn from alongside the
/// ratings ([`LibraryJudgements`]).
pub fn library_judgements(
    dir: &Path,
    qrels_path: &Path,
    report: &dyn Report,
) -> Result<LibraryJudgements> {
    let library = Arc::new(Library::open(dir)?);
    let qrels = precedent_formats::read_qrels(qrels_path)?;
    let (judgements, warnings) = LibraryJudgements::new(library, &qrels)?;
    for w in &warnings {
        report.warn(&format!("warning: {w}"));
    }
    Ok(judgements)
}

/// Reads query files, each one wording of the same queries ([`precedent_formats::wording_of`]).
/// Two files of the same wording, or a file whose ids differ from the first file's, are
/// refused: their figures could not be compared query for query.
pub fn read_wordings(paths: &[PathBuf]) -> Result<Vec<(String, Vec<Query>)>> {
    let mut wordings: Vec<(String, Vec<Query>)> = Vec::new();
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
            let ids = |qs: &[Query]| qs.iter().map(|q| q.id.clone()).collect::<BTreeSet<_>>();
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

/// Query-rule names as given (`--without-rule`), with `all` standing for every query rule.
pub fn expand_rules(rules: &[String]) -> Vec<String> {
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
    embedder: &Embedder,
    cache_dir: &Path,
    report: &dyn Report,
) -> Result<Option<CuadTypeProfiles>> {
    let Some(dir) = dir.or_else(precedent_clause_types::cache::find_cuad_dir) else {
        report.warn(
            "warning: no CUAD folder found (give --cuad DIR); the CUAD clause-type features will be zero",
        );
        return Ok(None);
    };
    let examples = precedent_learn::category::cuad_type_examples(&dir, per_type)?;
    let texts: Vec<&str> = examples.iter().map(|(_, t)| t.as_str()).collect();
    report.start("embedding CUAD type examples", texts.len() as u64);
    let options = precedent_models::EmbedOptions::default();
    let done = std::cell::Cell::new(0usize);
    let progress = |n: usize| {
        report.advance(n.saturating_sub(done.get()) as u64);
        done.set(n.max(done.get()));
    };
    let vectors = match precedent_models::EmbeddingCache::open(cache_dir) {
        Ok(cache) => cache.get_or_compute(embedder, &texts, &options, &progress)?,
        Err(_) => embedder.embed_with(&texts, &options, &progress)?,
    };
    report.finish();
    Ok(Some(CuadTypeProfiles::from_examples(
        examples
            .iter()
            .zip(&vectors)
            .map(|((name, _), v)| (*name, v.as_slice())),
    )))
}

/// Reads and merges rating files; the same query in two files is refused (ambiguous labels).
pub fn read_all_qrels(paths: &[PathBuf]) -> Result<Qrels> {
    let mut merged = Qrels::new();
    let mut seen: HashMap<String, PathBuf> = Default::default();
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

pub use precedent_engine::cross_encoder_training::seen_queries;

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

/// What a cross-validation of the ranker scores.
#[derive(Debug, Clone, Copy, Default)]
pub struct CvPlan {
    /// Folds by query.
    pub folds: usize,
    /// Also single stages and the ablation of every feature group (and of every rule).
    pub ablation: bool,
    /// Also the model without any query rule and without each rule in turn.
    pub rule_ablation: bool,
    /// The rule selection estimated honestly, by an inner cross-validation in each outer fold.
    pub nested_rules: bool,
    /// Also one round of a lawyer's marks on the first page, simulated from the ratings and
    /// scored on the rest ([`Variant::marks_study`]).
    pub marks: bool,
}

/// A cross-validation's report, and what the rule protocols chose.
pub struct CvOutcome {
    pub report: CvReport,
    /// With [`CvPlan::nested_rules`]: the rules each outer fold's inner CV switched off, on
    /// each line.
    pub fold_rules_off: Option<FoldRules>,
    /// With an ablation: the rules the protocol switches off on this report, reading the
    /// judged line and the served line ([`RuleLine`]); the served one is empty when the report
    /// has no served ablation (the whole `--ablation` study).
    pub rules_off: Option<ByLine<Vec<String>>>,
}

impl CvOutcome {
    /// What `train --cv` prints: the rules each outer fold switched off, the report's table,
    /// the rules the protocol switches off, and the time taken.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        use precedent_learn::cv::describe_rules;
        if let Some(chosen) = &self.fold_rules_off {
            for (fold, (judged, served)) in chosen.judged.iter().zip(&chosen.served).enumerate() {
                let _ = writeln!(
                    out,
                    "outer fold {}: rules switched off by the inner CV: on the judged line {}; as served {}",
                    fold + 1,
                    describe_rules(judged),
                    describe_rules(served)
                );
            }
        }
        out.push_str(&self.report.table());
        if let Some(ByLine { judged, served }) = &self.rules_off {
            let _ = writeln!(
                out,
                "rules the protocol switches off (removal does not lower the mean NDCG@5, or raises a wording's by more than {:.1}): on the judged line {}; as served {}",
                100.0 * precedent_learn::cv::RULE_WORDING_TOLERANCE,
                describe_rules(judged),
                describe_rules(served)
            );
        }
        let _ = writeln!(out, "({:.0} s)", self.report.seconds);
        out
    }
}

/// The variants `plan` scores: hybrid alone and the full model, the rule ablation on request,
/// or the whole ablation study; every learned variant leaves out `without`, and the full
/// model's name says so.
pub fn cv_variants(plan: &CvPlan, without: &[String]) -> Vec<Variant> {
    let variants = if plan.ablation {
        Variant::ablation_study()
    } else {
        let mut variants = vec![
            Variant::Feature {
                name: "hybrid rrf alone".into(),
                column: 5,
            },
            Variant::full(),
            Variant::served(),
        ];
        if plan.rule_ablation {
            variants.extend(Variant::rule_ablation());
            variants.extend(Variant::served_rule_ablation());
        }
        variants
    };
    let marks = if plan.marks {
        Variant::marks_study()
    } else {
        Vec::new()
    };
    variants
        .into_iter()
        .map(|v| match v {
            Variant::Learned {
                name,
                dropped,
                feedback,
                rules_off,
            } if !without.is_empty() && dropped.is_empty() && feedback => Variant::Learned {
                name: name.replace("all features", &format!("without {}", without.join(", "))),
                dropped,
                feedback,
                rules_off,
            },
            v => v,
        })
        .chain(marks)
        .collect()
}

/// Cross-validates the learned ranker by query as `plan` asks ([`cv_variants`], or the nested
/// rule selection), with the rule protocol's choice when an ablation was scored.
pub fn cross_validate_ranker(
    library: &Arc<Library>,
    data: &TrainingData<'_>,
    plan: &CvPlan,
    options: &TrainOptions,
    report: &dyn Report,
) -> Result<CvOutcome> {
    let (cv, fold_rules_off) = if plan.nested_rules {
        let (cv, off) = precedent_learn::cv::cross_validate_nested(
            library,
            data,
            plan.folds,
            options,
            |msg| report.note(msg),
        )?;
        (cv, Some(off))
    } else {
        let variants = cv_variants(plan, &options.without);
        let cv = cross_validate(library, data, plan.folds, options, &variants, |msg| {
            report.note(msg)
        })?;
        (cv, None)
    };
    let rules_off = (plan.rule_ablation || plan.ablation).then(|| rule_choices(&cv));
    Ok(CvOutcome {
        report: cv,
        fold_rules_off,
        rules_off,
    })
}

/// Each fold's model scored on a library cut from contracts, next to hybrid+types.
pub struct LibraryCv {
    /// How the rankings were scored.
    pub protocol: crate::Protocol,
    /// Clauses in the library.
    pub clauses: usize,
    /// Held-out queries scored.
    pub queries: usize,
    /// `(ranking, mean metrics)`: hybrid+types, then the learned ranker's folds; with several
    /// wordings, one row per wording and one for their mean, for each.
    pub rows: Vec<(String, MeanMetrics)>,
}

impl LibraryCv {
    /// `train --cv-library`'s table: hybrid+types and the learned folds on the library at
    /// `target_dir`, scored with the judgements of `qrels_path`.
    pub fn table(&self, target_dir: &Path, qrels_path: &Path) -> String {
        use std::fmt::Write;
        let pct = |x: Option<f64>| x.map_or("   -".to_string(), |v| format!("{:5.1}", 100.0 * v));
        let mut out = format!(
            "on {} ({} clauses; judgements {}), {} queries, {} protocol\n",
            target_dir.display(),
            self.clauses,
            qrels_path.display(),
            self.queries,
            self.protocol.name()
        );
        for (name, m) in &self.rows {
            let _ = writeln!(
                out,
                "{name:<60} {:>6} {:>6} {:>6} {:>6} {:>6}",
                pct(Some(m.ndcg5)),
                pct(Some(m.ndcg10)),
                pct(m.p5_4star),
                pct(m.p5_5star),
                pct(m.recall100)
            );
        }
        out
    }
}

/// `train --cv K --cv-library LIB`: each fold's model (trained on the rated library, as `--cv`
/// trains it) ranks LIB's whole clause set for the fold's held-out queries, scored with LIB's
/// judgements (`map-qrels`, condensed protocol) in every wording given; hybrid+types ranks the
/// same queries. Says how a ranker trained on hand-cut clauses does on a library cut from
/// contracts.
#[allow(clippy::too_many_arguments)]
pub fn cross_validate_on_library(
    library: &Arc<Library>,
    data: &TrainingData<'_>,
    embedder: &Arc<Embedder>,
    folds: usize,
    options: &TrainOptions,
    target_dir: &Path,
    qrels_path: &Path,
    protocol: crate::Protocol,
    report: &dyn Report,
) -> Result<LibraryCv> {
    let target = Arc::new(Library::open(target_dir)?);
    if target.vectors_info().is_none() {
        bail!(
            "{} has no clause vectors: ingest it without --no-vectors",
            target_dir.display()
        );
    }
    let qrels = precedent_formats::read_qrels(qrels_path)?;
    let rated = data.rated;
    // Every wording given is scored (the library's judgements are per query id, so they apply
    // to each), each with the same fold models.
    let wordings = precedent_learn::cv::wordings_of(rated);
    let queries: Vec<Vec<Query>> = wordings
        .iter()
        .map(|wording| {
            rated
                .iter()
                .filter(|q| &q.wording == wording)
                .map(|q| Query {
                    id: q.id.clone(),
                    text: q.text.clone(),
                    category: q.category.clone(),
                    split: None,
                    metadata: serde_json::Value::Null,
                })
                .collect()
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
    let eval_options = crate::EvalOptions {
        protocol,
        ..Default::default()
    };
    let clause_types = data.clause_types.cloned();
    let mut learned: Vec<Vec<crate::QueryResult>> = vec![Vec::new(); wordings.len()];
    for fold in 0..folds {
        report.note(&format!(
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
            column_override: None,
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
            precedent_learn::LEARNED_TOP,
            None,
            clause_types.clone(),
        )?;
        let held_out = subset(&|q| fold_of.get(q) == Some(&fold));
        if held_out.num_queries() == 0 {
            continue;
        }
        for (wording_queries, results) in queries.iter().zip(learned.iter_mut()) {
            let evaluation = crate::evaluate(
                &pipeline,
                &target,
                wording_queries,
                &held_out,
                &eval_options,
                &precedent_library::NoProgress,
            )?;
            results.extend(evaluation.per_query);
        }
    }
    let scored: HashSet<&str> = learned
        .iter()
        .flatten()
        .map(|r| r.query_id.as_str())
        .collect();
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
    let scored_qrels = subset(&|q| scored.contains(q));
    let mut baseline: Vec<Vec<crate::QueryResult>> = Vec::with_capacity(wordings.len());
    for wording_queries in &queries {
        let evaluation = crate::evaluate(
            &baseline_pipeline,
            &target,
            wording_queries,
            &scored_qrels,
            &eval_options,
            &precedent_library::NoProgress,
        )?;
        baseline.push(evaluation.per_query);
    }
    let learned_name = match options.without.as_slice() {
        [] => format!("learned, {folds}-fold CV by query"),
        groups => format!(
            "learned without {}, {folds}-fold CV by query",
            groups.join(", ")
        ),
    };
    let mean = |results: &[Vec<crate::QueryResult>]| {
        MeanMetrics::of(results.iter().flatten().map(|r| &r.metrics))
    };
    let mut rows = Vec::new();
    for (name, results) in [
        (HYBRID_WITH_TYPES.to_string(), &baseline),
        (learned_name, &learned),
    ] {
        if wordings.len() > 1 {
            // Each wording scores the same queries, so the pooled mean is the mean of wordings.
            for (wording, per_query) in wordings.iter().zip(results.iter()) {
                rows.push((
                    format!("{name}, {wording}"),
                    MeanMetrics::of(per_query.iter().map(|r| &r.metrics)),
                ));
            }
            rows.push((format!("{name}, mean of wordings"), mean(results)));
        } else {
            rows.push((name, mean(results)));
        }
    }
    Ok(LibraryCv {
        protocol,
        clauses: target.len(),
        queries: scored.len(),
        rows,
    })
}

/// `eval`'s default pipeline over `library`, and the note that says why: the one `search`
/// would choose ([`pipeline_choice::default_ranking`]), except that a learned ranker trained on
/// the queries being scored gives way to `hybrid+types`.
pub fn default_eval_ranking(
    library: &Library,
    model_dir: Option<&Path>,
    qrels: &Qrels,
) -> Result<(&'static str, String)> {
    let name = pipeline_choice::default_ranking(library, model_dir)?;
    if name == "bm25" {
        let note = format!(
            "note: {} has no clause vectors, so the default pipeline here is bm25",
            library.root().display()
        );
        return Ok((name, note));
    }
    if name != LEARNED {
        let note = "note: no learned ranker was trained for this library, so the default pipeline here is hybrid+types";
        return Ok((name, note.to_owned()));
    }
    let (ranker, _) = pipeline_choice::ranker_for(library, model_dir)?;
    match ranker.map(|model| check_no_overlap(&model, qrels)) {
        Some(Ok(())) => Ok((LEARNED, String::new())),
        _ => Ok((
            HYBRID_WITH_TYPES,
            "note: the learned ranker was trained on these queries, so the default pipeline here is hybrid+types; use `precedent train --cv 5` for cross-validated learned figures, or a model trained without them (--model-dir)".to_owned(),
        )),
    }
}

/// Refuses training options no ranker can be trained with: an unknown feature group or query
/// rule, or `--train-wordings` for a model file (`for_file`), which learns from the wordings
/// it is given.
pub fn check_train_options(options: &TrainOptions, for_file: bool) -> Result<()> {
    precedent_learn::cv::group_columns(&options.without).map_err(anyhow::Error::msg)?;
    precedent_learn::features::check_rule_names(&options.without_rules)
        .map_err(anyhow::Error::msg)?;
    if for_file && !options.train_wordings.is_empty() {
        // Training for a model file uses the wordings it is given; --train-wordings is a CV knob.
        bail!("--train-wordings applies to --cv; give the model's wordings as --queries files");
    }
    if options.monotone && options.learner == precedent_learn::Learner::Gbdt {
        bail!(
            "--monotone needs --learner boost or blend: the gbdt crate's trees cannot hold the constraint"
        );
    }
    Ok(())
}

/// One line about the rated queries: how many, in how many wordings, and their ratings.
pub fn describe_rated(rated: &[RatedQuery]) -> String {
    let wordings = precedent_learn::cv::wordings_of(rated);
    format!(
        "{} rated queries in {} wording(s) ({}), {} ratings",
        rated.len() / wordings.len().max(1),
        wordings.len(),
        wordings.join(", "),
        rated.iter().map(|q| q.ratings.len()).sum::<usize>() / wordings.len().max(1)
    )
}

/// The bi-encoder that embedded `library` (else `model`), for scoring on another library.
pub fn library_embedder(library: &Library, model: &str) -> Result<Arc<Embedder>> {
    let spec = library
        .vectors_info()
        .map(|i| i.model_source.clone())
        .unwrap_or_else(|| model.to_owned());
    Ok(Arc::new(library_setup::load_embedder(&spec)?))
}

/// Trains the ranker on `data` (`rating_files` named in its manifest) and saves it to `out`;
/// returns the line that says so, counting queries once per wording.
pub fn train_and_save(
    library: &Arc<Library>,
    data: &TrainingData<'_>,
    embedder: &Embedder,
    rating_files: Vec<String>,
    options: &TrainOptions,
    out: &Path,
    report: &dyn Report,
) -> Result<String> {
    report.start("features of training queries", data.rated.len() as u64);
    let model = precedent_learn::train(
        library,
        data,
        embedder.model_id(),
        rating_files,
        options,
        |_, _| report.advance(1),
    )?;
    report.finish();
    model.save(out)?;
    // The manifest counts query texts (one per query and wording); say both.
    let per_wording = precedent_learn::cv::wordings_of(data.rated).len().max(1);
    Ok(format!(
        "model written to {} ({} queries in {} wording(s), {} ratings, {:.1} s)",
        out.display(),
        model.manifest.training_queries / per_wording,
        per_wording,
        model.manifest.training_ratings / per_wording,
        model.manifest.train_seconds
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use precedent_learn::Learner;

    /// Only the boost trees can hold monotone constraints (alone or as the blend's histogram
    /// half): asking the gbdt crate's for them is refused before any work, not silently ignored.
    #[test]
    fn monotone_trees_need_the_boost_learner() {
        let gbdt = TrainOptions {
            monotone: true,
            ..TrainOptions::default()
        };
        let refused = check_train_options(&gbdt, false).expect_err("gbdt cannot be monotone");
        assert!(refused.to_string().contains("--learner boost"), "{refused}");
        for learner in [Learner::Boost, Learner::Blend] {
            let options = TrainOptions {
                learner,
                ..gbdt.clone()
            };
            assert!(check_train_options(&options, false).is_ok(), "{learner:?}");
        }
    }
}
