//! What the server holds in memory: each served library with its pipelines (models loaded once
//! and shared), key store and rating log.
//!
//! A library on disk moves on by generations (`precedent ingest` or `index --add` while the
//! server runs). Each served library sits in a [`LibrarySlot`] that the server's watcher
//! refreshes when `CURRENT` names a new generation: the new generation's pipelines are built
//! beside the old ones and swapped in whole. A request takes the slot's service once
//! ([`LibrarySlot::get`]) and keeps it to the end, so the rows its search returns are read from
//! the same generation; the old one lives on until its last request finishes (its files stay
//! readable through the handles it holds, even after the writer removes its directory).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use precedent_engine::served_pipelines::{served_pipelines, ServedPipelines};
use precedent_engine::{PipelineContext, Rankers};
use precedent_library::Library;
use precedent_models::{CrossEncoder, Embedder};
use precedent_rank::Pipeline;
use precedent_text::Analyzer;

use crate::keys::KeyStore;
use crate::ratings::RatingLog;
use crate::ServeError;

/// Which library to serve, under which name.
#[derive(Debug, Clone)]
pub struct LibrarySpec {
    pub name: String,
    pub dir: PathBuf,
}

impl LibrarySpec {
    /// Parses `NAME=DIR` or `DIR` (named after the directory).
    pub fn parse(spec: &str) -> Result<Self, String> {
        let (name, dir) = match spec.split_once('=') {
            Some((name, dir)) => (name.trim().to_owned(), PathBuf::from(dir)),
            None => {
                let dir = PathBuf::from(spec);
                let name = dir
                    .canonicalize()
                    .ok()
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_else(|| "library".to_owned());
                (name, dir)
            }
        };
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid {
            return Err(format!(
                "library name {name:?} must be letters, digits, '-', '_' or '.' (use NAME=DIR)"
            ));
        }
        Ok(LibrarySpec { name, dir })
    }
}

/// How the server loads models.
#[derive(Debug, Clone, Default)]
pub struct ModelOptions {
    /// Query bi-encoder; by default each library's own model.
    pub model: Option<String>,
    /// Cross-encoder directory, enabling `rerank` in search requests.
    pub rerank_model: Option<PathBuf>,
    /// Candidates the cross-encoder rescores.
    pub rerank_top: usize,
    /// Learned ranker directory (`precedent train --out`); by default
    /// [`precedent_learn::default_model_dir`] (`$PRECEDENT_RANKER`, else the shipped
    /// `models/acord-ranker` above the working directory), if there is one.
    pub ranker_dir: Option<PathBuf>,
    /// Hybrid candidates the learned ranker reorders.
    pub learned_top: usize,
    /// Reads clauses' CUAD types for queries that name one (the learned pipeline's clause-type
    /// rule, [`precedent_learn::clause_types`]); without it such queries rank without the rule.
    pub clause_types: Option<Arc<dyn precedent_learn::ClauseTypeReader>>,
    /// How often the server looks for a new generation of its libraries (`None`: never).
    pub watch_every: Option<std::time::Duration>,
    /// Serve the detailed `/healthz` (libraries, sizes, model states) and `/metrics` without a
    /// key (`serve --public-status`). Otherwise they need an admin key, and `/healthz` without
    /// one answers only that the server is up.
    pub public_status: bool,
    /// How many `/v1/compare` diffs run at once (`serve --compare-limit`); by default one core
    /// fewer than the machine has ([`crate::default_compare_limit`]).
    pub compare_limit: Option<usize>,
}

/// One served library, as of one generation.
pub struct LibraryService {
    pub name: String,
    /// The generation served (`gen-000004`).
    pub generation: String,
    pub library: Arc<Library>,
    /// Pipelines by name; `NAME+cross-encoder` variants when a cross-encoder is loaded.
    pub pipelines: BTreeMap<String, Arc<Pipeline>>,
    pub default_pipeline: String,
    /// Shared by the library's successive generations.
    pub keys: Arc<KeyStore>,
    pub ratings: Arc<RatingLog>,
    /// The library's own analyzer, for highlighting query terms in clause text.
    pub analyzer: Analyzer,
    /// Says why each hit matched (with the learned ranker's ratings where it has them).
    pub explainer: precedent_engine::explain::Explainer,
}

impl LibraryService {
    pub fn pipeline(&self, name: Option<&str>, rerank: bool) -> Result<Arc<Pipeline>, String> {
        let base = name.unwrap_or(&self.default_pipeline);
        let key = if rerank {
            format!("{base}+cross-encoder")
        } else {
            base.to_owned()
        };
        self.pipelines.get(&key).cloned().ok_or_else(|| {
            let known: Vec<&str> = self.pipelines.keys().map(String::as_str).collect();
            if rerank && self.pipelines.contains_key(base) {
                format!("reranking needs a cross-encoder: start the server with --rerank-model DIR (pipelines here: {})", known.join(", "))
            } else {
                format!("pipeline {base:?} is not available for library {:?}; available: {}", self.name, known.join(", "))
            }
        })
    }
}

/// The models every library's pipelines share, kept to build a new generation's pipelines.
pub struct Loader {
    options: ModelOptions,
    embedders: Mutex<HashMap<String, Arc<Embedder>>>,
    cross_encoder: Option<Arc<CrossEncoder>>,
    /// The learned rankers, loaded once for every library and generation.
    rankers: Rankers,
}

/// A served library: the service of its current generation, replaced whole by
/// [`LibrarySlot::refresh`].
pub struct LibrarySlot {
    spec: LibrarySpec,
    current: RwLock<Arc<LibraryService>>,
    loader: Arc<Loader>,
}

impl LibrarySlot {
    /// The name the library is served under.
    pub fn name(&self) -> &str {
        &self.spec.name
    }
    /// The service of the generation served now; keep it for the whole request.
    pub fn get(&self) -> Arc<LibraryService> {
        // A poisoned lock only means a panic elsewhere while swapping; the Arc inside is whole.
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Serves the library's current generation if it is not the one served: builds its
    /// pipelines, then swaps. `Ok(true)` when it swapped. On error the old generation stays.
    pub fn refresh(&self) -> Result<bool, ServeError> {
        let served = self.get();
        let on_disk = Library::current_generation(&self.spec.dir)
            .map_err(|e| ServeError::Config(e.to_string()))?;
        if on_disk == served.generation {
            return Ok(false);
        }
        let fresh = load_library(&self.spec, &self.loader, Some(&served))?;
        tracing::info!(
            "library {:?}: now serving {} ({} clauses, was {} with {})",
            self.name(),
            fresh.generation,
            fresh.library.len(),
            served.generation,
            served.library.len()
        );
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(fresh);
        Ok(true)
    }
}

/// Opens every library and builds its pipelines, loading each model once.
pub fn load_libraries(
    specs: &[LibrarySpec],
    options: &ModelOptions,
) -> Result<Vec<Arc<LibrarySlot>>, ServeError> {
    if specs.is_empty() {
        return Err(ServeError::Config(
            "no library to serve: pass --index DIR".into(),
        ));
    }
    let rankers = Rankers::load(options.ranker_dir.as_deref())
        .map_err(|e| ServeError::Config(format!("learned ranker: {e}")))?;
    let cross_encoder = match &options.rerank_model {
        Some(dir) => Some(Arc::new(
            CrossEncoder::load(&dir.to_string_lossy()).map_err(|e| {
                ServeError::Config(format!("loading cross-encoder {}: {e}", dir.display()))
            })?,
        )),
        None => None,
    };
    let loader = Arc::new(Loader {
        options: options.clone(),
        embedders: Mutex::new(HashMap::new()),
        cross_encoder,
        rankers,
    });
    let mut slots: Vec<Arc<LibrarySlot>> = Vec::with_capacity(specs.len());
    for spec in specs {
        if slots.iter().any(|s| s.name() == spec.name) {
            return Err(ServeError::Config(format!(
                "two libraries are named {:?}; name them with NAME=DIR",
                spec.name
            )));
        }
        let service = load_library(spec, &loader, None)?;
        slots.push(Arc::new(LibrarySlot {
            spec: spec.clone(),
            current: RwLock::new(Arc::new(service)),
            loader: loader.clone(),
        }));
    }
    Ok(slots)
}

/// Opens the library's current generation and builds its pipelines; the key store and rating
/// log are `previous`'s when the library was served before.
fn load_library(
    spec: &LibrarySpec,
    loader: &Loader,
    previous: Option<&LibraryService>,
) -> Result<LibraryService, ServeError> {
    let options = &loader.options;
    let cross_encoder = loader.cross_encoder.as_ref();
    let library =
        Arc::new(Library::open(&spec.dir).map_err(|e| ServeError::Config(e.to_string()))?);
    let (ranker, ranker_is_default) = loader.rankers.for_library(&library);
    let model_spec = options
        .model
        .clone()
        .or_else(|| library.vectors_info().map(|info| info.model_source.clone()));
    let embedder = match model_spec {
        Some(model) if library.vectors_info().is_some() => {
            let mut embedders = loader.embedders.lock().unwrap_or_else(|e| e.into_inner());
            Some(match embedders.get(&model) {
                Some(e) => e.clone(),
                None => {
                    let loaded = Arc::new(Embedder::load(&model).map_err(|e| {
                        ServeError::Config(format!(
                        "loading bi-encoder {model:?} for library {}: {e} (run scripts/setup.sh)",
                        spec.dir.display()
                    ))
                    })?);
                    embedders.insert(model, loaded.clone());
                    loaded
                }
            })
        }
        _ => None,
    };
    let context = PipelineContext {
        embedder: embedder.clone(),
        ranker: ranker.clone(),
        clause_types: options.clause_types.clone(),
        learned_top: options.learned_top,
        rerank_top: options.rerank_top,
        ..PipelineContext::new(library.clone())
    };
    let dir = spec.dir.display().to_string();
    let ServedPipelines {
        pipelines,
        default_pipeline,
    } = served_pipelines(&context, ranker_is_default, cross_encoder, &dir)
        .map_err(|e| ServeError::Config(format!("library {dir}: {e}")))?;
    let analyzer = Analyzer::new(library.manifest().analyzer.clone());
    let explainer = precedent_engine::explain::Explainer::new(ranker.clone(), embedder.clone());
    let (keys, ratings) = match previous {
        Some(p) => (p.keys.clone(), p.ratings.clone()),
        None => (
            Arc::new(KeyStore::new(&spec.dir)),
            Arc::new(RatingLog::open(&spec.dir).map_err(|e| ServeError::Config(e.to_string()))?),
        ),
    };
    Ok(LibraryService {
        name: spec.name.clone(),
        generation: library.generation(),
        keys,
        library,
        pipelines,
        default_pipeline,
        ratings,
        analyzer,
        explainer,
    })
}

/// True if `dir` holds a library (keys are only created for real libraries).
pub fn is_library(dir: &Path) -> bool {
    Library::exists(dir)
}
