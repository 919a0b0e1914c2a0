//! Models loaded on their first use, not at start.
//!
//! Why: the clause typer behind `/v1/review` and the clause classifier behind `/v1/classify`
//! take seconds to load and, the very first time, minutes to train. A server start should not
//! pay that when nobody reviews or classifies, and searches must keep being served while it
//! happens. Concurrent first uses wait for the one load; a failed load is remembered and
//! reported with its reason (it would fail the same way again; the server answers 503). `serve
//! --preload` starts the loads at start instead, in the background, and `/healthz` tells where
//! each one is ([`ModelState`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Loads a model; called once, on the first request that needs it.
pub type Loader<T> = Arc<dyn Fn() -> Result<Arc<T>, String> + Send + Sync>;

/// The typer `precedent review` reviews with (word features only when `fast`), for the first
/// `/v1/review` of a contract.
pub fn review_loader(
    models: precedent_review::ClauseModels,
    fast: bool,
) -> Loader<precedent_clause_types::ClauseTyper> {
    Arc::new(move || {
        eprintln!("loading the clause typer for /v1/review");
        let typer = models.load_for_review(fast).map_err(|e| format!("{e:#}"))?;
        Ok(Arc::new(typer))
    })
}

/// The UNFAIR-ToS model `precedent review --kind tos` reads (the same cached model), for the
/// first `/v1/review` of terms of service.
pub fn tos_loader(
    source: precedent_unfair::cache::UnfairSource,
) -> Loader<precedent_unfair::UnfairModel> {
    Arc::new(move || {
        eprintln!("loading the UNFAIR-ToS classifier for /v1/review");
        source.load().map(Arc::new).map_err(|e| format!("{e:#}"))
    })
}

/// The classifier `precedent classify` answers with, for the first `/v1/classify`: the classify
/// model `classify_model` (else the cached one) with the type gate of `models`' second stage,
/// which review shares ([`precedent_review::ClauseModels::load_classify`]).
pub fn classify_loader(
    models: precedent_review::ClauseModels,
    classify_model: Option<std::path::PathBuf>,
    words_only: bool,
) -> Loader<precedent_clause_types::clause_classifier::ClauseClassifier> {
    Arc::new(move || {
        eprintln!("loading the clause classifier for /v1/classify");
        models
            .load_classify(classify_model.clone(), words_only, true)
            .map(Arc::new)
            .map_err(|e| format!("{e:#}"))
    })
}

/// Why a [`LazyModel`] has no model to give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// There is no loader: the feature is not available here (the server answers 501).
    #[error("{feature} is not available in this server: it needs {model} (start `precedent serve` from a build that has it)")]
    Unavailable {
        feature: &'static str,
        model: &'static str,
    },
    /// The load failed, and would fail again (the server answers 503).
    #[error("{model} could not be loaded: {reason}")]
    Failed { model: &'static str, reason: String },
}

/// A model loaded on first use; `None` loader = the feature is not available in this server.
pub struct LazyModel<T: ?Sized> {
    /// What the model is, for messages: "the clause typer".
    model: &'static str,
    /// What needs it, for the 501 when there is no loader: "contract review".
    feature: &'static str,
    loader: Mutex<Option<Loader<T>>>,
    loaded: OnceLock<Loaded<T>>,
    /// A load has started (it may be running now).
    started: AtomicBool,
}

/// How the one load ended.
enum Loaded<T: ?Sized> {
    Ready(Arc<T>),
    Failed(String),
    /// There was no loader.
    Unavailable,
}

/// Where a [`LazyModel`] is, as `/healthz` reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "state", content = "reason")]
pub enum ModelState {
    /// No request has needed it yet (and no preload asked for it).
    NotLoaded,
    /// Loading, or training for the first time.
    Loading,
    Ready,
    /// The load failed; its requests answer 503 with this reason.
    Failed(String),
    /// This server has no loader for it; its requests answer 501.
    Unavailable,
}

/// The clause-type reader of queries reports the same states as the models loaded here.
impl From<precedent_learn::clause_types::ReaderState> for ModelState {
    fn from(state: precedent_learn::clause_types::ReaderState) -> Self {
        use precedent_learn::clause_types::ReaderState;
        match state {
            ReaderState::NotLoaded => ModelState::NotLoaded,
            ReaderState::Loading => ModelState::Loading,
            ReaderState::Ready => ModelState::Ready,
            ReaderState::Failed(reason) => ModelState::Failed(reason),
        }
    }
}

impl<T: ?Sized + Send + Sync + 'static> LazyModel<T> {
    /// A model named `model` ("the clause typer") that `feature` ("contract review") needs,
    /// loaded by `loader` on first use.
    pub fn new(model: &'static str, feature: &'static str, loader: Option<Loader<T>>) -> Self {
        LazyModel {
            model,
            feature,
            loader: Mutex::new(loader),
            loaded: OnceLock::new(),
            started: AtomicBool::new(false),
        }
    }

    /// Where the model is now.
    pub fn state(&self) -> ModelState {
        match self.loaded.get() {
            Some(Loaded::Ready(_)) => ModelState::Ready,
            Some(Loaded::Unavailable) => ModelState::Unavailable,
            Some(Loaded::Failed(e)) => ModelState::Failed(e.clone()),
            None if self.started.load(Ordering::SeqCst) => ModelState::Loading,
            None if self
                .loader
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_none() =>
            {
                ModelState::Unavailable
            }
            None => ModelState::NotLoaded,
        }
    }

    /// What `model` is, for messages.
    pub fn model(&self) -> &'static str {
        self.model
    }

    /// The model, loading it on this thread if this is its first use (other first uses wait
    /// for the one load).
    pub fn get(&self) -> Result<Arc<T>, LoadError> {
        let loaded = self.loaded.get_or_init(|| {
            self.started.store(true, Ordering::SeqCst);
            let loader = self.loader.lock().unwrap_or_else(|p| p.into_inner()).take();
            let Some(load) = loader else {
                return Loaded::Unavailable;
            };
            // A panicking loader is a failed load, not a model stuck "loading" forever.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| load())) {
                Ok(Ok(model)) => Loaded::Ready(model),
                Ok(Err(e)) => Loaded::Failed(e),
                Err(panic) => Loaded::Failed(format!(
                    "loading panicked: {}",
                    panic
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| panic.downcast_ref::<&str>().copied())
                        .unwrap_or("unknown panic")
                )),
            }
        });
        match loaded {
            Loaded::Ready(model) => Ok(model.clone()),
            Loaded::Unavailable => Err(LoadError::Unavailable {
                feature: self.feature,
                model: self.model,
            }),
            Loaded::Failed(e) => Err(LoadError::Failed {
                model: self.model,
                reason: e.clone(),
            }),
        }
    }

    /// Starts loading the model on a thread of its own, now rather than on its first request.
    pub fn preload(self: &Arc<Self>) {
        let lazy = self.clone();
        std::thread::spawn(move || {
            if let Err(e) = lazy.get() {
                tracing::warn!("{e}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn loads_once_and_remembers_a_failure() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let ok: LazyModel<str> = LazyModel::new(
            "the thing",
            "doing it",
            Some(Arc::new(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok(Arc::from("loaded"))
            })),
        );
        let ok = Arc::new(ok);
        assert_eq!(ok.state(), ModelState::NotLoaded);
        for _ in 0..3 {
            assert_eq!(&*ok.get().expect("loads"), "loaded");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(ok.state(), ModelState::Ready);

        let failing: Arc<LazyModel<str>> = Arc::new(LazyModel::new(
            "the thing",
            "doing it",
            Some(Arc::new(|| Err("no weights".to_owned()))),
        ));
        let error = failing.get().expect_err("fails");
        assert!(matches!(error, LoadError::Failed { .. }));
        assert!(error
            .to_string()
            .contains("the thing could not be loaded: no weights"));
        assert!(matches!(
            failing.get().expect_err("fails again"),
            LoadError::Failed { .. }
        ));

        assert!(matches!(failing.state(), ModelState::Failed(e) if e == "no weights"));

        let absent: Arc<LazyModel<str>> = Arc::new(LazyModel::new("the thing", "doing it", None));
        assert_eq!(absent.state(), ModelState::Unavailable);
        let error = absent.get().expect_err("absent");
        assert!(matches!(error, LoadError::Unavailable { .. }));
        assert!(error.to_string().starts_with("doing it is not available"));
    }

    #[test]
    fn a_panicking_loader_is_a_failed_load() {
        let lazy: Arc<LazyModel<str>> = Arc::new(LazyModel::new(
            "the thing",
            "doing it",
            Some(Arc::new(|| panic!("weights out of range"))),
        ));
        let error = lazy.get().expect_err("fails");
        assert!(matches!(error, LoadError::Failed { .. }));
        assert!(
            error.to_string().contains("weights out of range"),
            "{error}"
        );
        assert!(matches!(lazy.state(), ModelState::Failed(_)));
    }

    #[test]
    fn a_preload_runs_in_the_background_and_reports_loading() {
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let wait = Mutex::new(wait);
        let lazy: Arc<LazyModel<str>> = Arc::new(LazyModel::new(
            "the thing",
            "doing it",
            Some(Arc::new(move || {
                let _ = wait.lock().map(|w| w.recv());
                Ok(Arc::from("loaded"))
            })),
        ));
        lazy.preload();
        let waited = std::time::Instant::now();
        while lazy.state() != ModelState::Loading {
            assert!(waited.elapsed().as_secs() < 10, "{:?}", lazy.state());
            std::thread::yield_now();
        }
        release.send(()).expect("release the load");
        while lazy.state() != ModelState::Ready {
            assert!(waited.elapsed().as_secs() < 10, "{:?}", lazy.state());
            std::thread::yield_now();
        }
    }
}
