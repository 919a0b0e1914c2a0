//! A library as a server serves it: which library under which name, the models every served
//! library shares (the query bi-encoders, the cross-encoder, the learned rankers, each loaded
//! once), and one generation of a library with its pipelines, default pipeline, keys, ratings,
//! analyzer and explainer.
//!
//! Why here: which bi-encoder a library is queried with, which ranker serves it and which
//! pipelines it offers are the engine's decisions ([`crate::served_pipelines`]); the server
//! only keeps the current generation of each library and swaps in the next.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use precedent_library::Library;
use precedent_models::{CrossEncoder, Embedder};
use precedent_rank::Pipeline;
use precedent_text::Analyzer;

use crate::explain::Explainer;
use crate::keys::KeyStore;
use crate::ratings::RatingLog;
use crate::served_pipelines::{served_pipelines, ServedPipelines};
use crate::{PipelineContext, Rankers};

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

/// How served libraries load their models.
#[derive(Clone, Default)]
pub struct ServedModelOptions {
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
    pub explainer: Explainer,
    /// The library's bi-encoder, whose vocabulary spelling correction leaves alone
    /// ([`crate::spelling`]); `None` for a library without vectors.
    pub embedder: Option<Arc<Embedder>>,
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

/// The models every served library's pipelines share, kept to build a new generation's
/// pipelines.
pub struct ServedModels {
    options: ServedModelOptions,
    embedders: Mutex<HashMap<String, Arc<Embedder>>>,
    cross_encoder: Option<Arc<CrossEncoder>>,
    /// The learned rankers, loaded once for every library and generation.
    rankers: Rankers,
}

impl ServedModels {
    /// Loads the learned rankers and the cross-encoder of `options`; bi-encoders load with the
    /// first library that needs each.
    pub fn load(options: &ServedModelOptions) -> Result<ServedModels, String> {
        let rankers = Rankers::load(options.ranker_dir.as_deref())
            .map_err(|e| format!("learned ranker: {e}"))?;
        let cross_encoder = match &options.rerank_model {
            Some(dir) => Some(Arc::new(
                CrossEncoder::load(&dir.to_string_lossy())
                    .map_err(|e| format!("loading cross-encoder {}: {e}", dir.display()))?,
            )),
            None => None,
        };
        Ok(ServedModels {
            options: options.clone(),
            embedders: Mutex::new(HashMap::new()),
            cross_encoder,
            rankers,
        })
    }
}

impl LibraryService {
    /// The library's current generation when it is not this one's (a writer committed since),
    /// opened with `models` and keeping this generation's keys and ratings; `None` when this is
    /// still the current one.
    pub fn reopened(
        &self,
        spec: &LibrarySpec,
        models: &ServedModels,
    ) -> Result<Option<LibraryService>, String> {
        let on_disk = Library::current_generation(&spec.dir).map_err(|e| e.to_string())?;
        if on_disk == self.generation {
            return Ok(None);
        }
        LibraryService::open(spec, models, Some(self)).map(Some)
    }

    /// Opens the library's current generation and builds its pipelines with `models`; the key
    /// store and rating log are `previous`'s when the library was served before.
    pub fn open(
        spec: &LibrarySpec,
        models: &ServedModels,
        previous: Option<&LibraryService>,
    ) -> Result<LibraryService, String> {
        let options = &models.options;
        let cross_encoder = models.cross_encoder.as_ref();
        let library = Arc::new(Library::open(&spec.dir).map_err(|e| e.to_string())?);
        let (ranker, ranker_is_default) = models.rankers.for_library(&library);
        let model_spec = options
            .model
            .clone()
            .or_else(|| library.vectors_info().map(|info| info.model_source.clone()));
        let embedder = match model_spec {
            Some(model) if library.vectors_info().is_some() => {
                let mut embedders = models.embedders.lock().unwrap_or_else(|e| e.into_inner());
                Some(match embedders.get(&model) {
                    Some(e) => e.clone(),
                    None => {
                        let loaded = Arc::new(Embedder::load(&model).map_err(|e| {
                            format!(
                                "loading bi-encoder {model:?} for library {}: {e} (run scripts/setup.sh)",
                                spec.dir.display()
                            )
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
            .map_err(|e| format!("library {dir}: {e}"))?;
        let analyzer = Analyzer::new(library.manifest().analyzer.clone());
        let explainer = Explainer::new(
            ranker.clone(),
            embedder.clone(),
            options.clause_types.clone(),
        );
        let (keys, ratings) = match previous {
            Some(p) => (p.keys.clone(), p.ratings.clone()),
            None => (
                Arc::new(KeyStore::new(&spec.dir)),
                Arc::new(RatingLog::open(&spec.dir).map_err(|e| e.to_string())?),
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
            embedder,
        })
    }
}
