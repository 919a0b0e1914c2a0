//! What the server holds in memory: each served library's current generation
//! ([`LibraryService`], opened by the engine with its pipelines, keys and ratings), swapped
//! whole when a new one is committed.
//!
//! A library on disk moves on by generations (`precedent ingest` or `index --add` while the
//! server runs). Each served library sits in a [`LibrarySlot`] that the server's watcher
//! refreshes when `CURRENT` names a new generation: the new generation's pipelines are built
//! beside the old ones and swapped in whole. A request takes the slot's service once
//! ([`LibrarySlot::get`]) and keeps it to the end, so the rows its search returns are read from
//! the same generation; the old one lives on until its last request finishes (its files stay
//! readable through the handles it holds, even after the writer removes its directory).

use std::path::Path;
use std::sync::{Arc, RwLock};

pub use precedent_engine::served_library::{
    LibraryService, LibrarySpec, ServedModelOptions, ServedModels,
};
use precedent_library::Library;

use crate::ServeError;

/// How the server loads models and watches its libraries.
#[derive(Clone, Default)]
pub struct ModelOptions {
    /// The models served libraries load ([`ServedModelOptions`]).
    pub models: ServedModelOptions,
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

/// A served library: the service of its current generation, replaced whole by
/// [`LibrarySlot::refresh`].
pub struct LibrarySlot {
    spec: LibrarySpec,
    current: RwLock<Arc<LibraryService>>,
    models: Arc<ServedModels>,
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
        let Some(fresh) = served
            .reopened(&self.spec, &self.models)
            .map_err(ServeError::Config)?
        else {
            return Ok(false);
        };
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
    let models = Arc::new(ServedModels::load(&options.models).map_err(ServeError::Config)?);
    let mut slots: Vec<Arc<LibrarySlot>> = Vec::with_capacity(specs.len());
    for spec in specs {
        if slots.iter().any(|s| s.name() == spec.name) {
            return Err(ServeError::Config(format!(
                "two libraries are named {:?}; name them with NAME=DIR",
                spec.name
            )));
        }
        let service = LibraryService::open(spec, &models, None).map_err(ServeError::Config)?;
        slots.push(Arc::new(LibrarySlot {
            spec: spec.clone(),
            current: RwLock::new(Arc::new(service)),
            models: models.clone(),
        }));
    }
    Ok(slots)
}

/// True if `dir` holds a library (keys are only created for real libraries).
pub fn is_library(dir: &Path) -> bool {
    Library::exists(dir)
}
