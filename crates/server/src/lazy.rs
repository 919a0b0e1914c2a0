//! Models that the server loads on their first request, not at start.
//!
//! Why: the clause typer behind `/v1/review` and the clause classifier behind `/v1/classify`
//! take seconds to load and, the very first time, minutes to train. A server start should not
//! pay that when nobody reviews or classifies, and searches must keep being served while it
//! happens. Concurrent first requests wait for the one load; a failed load is remembered and
//! answered as 503 with its reason (it would fail the same way again).

use std::sync::{Arc, Mutex, OnceLock};

use axum::http::StatusCode;

use crate::problem::Problem;

/// Loads a model; called once, on the first request that needs it.
pub type Loader<T> = Arc<dyn Fn() -> Result<Arc<T>, String> + Send + Sync>;

/// A model loaded on first use; `None` loader = the feature is not available in this server.
pub struct LazyModel<T: ?Sized> {
    /// What the model is, for messages: "the clause typer".
    model: &'static str,
    /// What needs it, for the 501 when there is no loader: "contract review".
    feature: &'static str,
    loader: Mutex<Option<Loader<T>>>,
    loaded: OnceLock<Result<Arc<T>, String>>,
}

impl<T: ?Sized + Send + Sync + 'static> LazyModel<T> {
    pub fn new(model: &'static str, feature: &'static str, loader: Option<Loader<T>>) -> Self {
        LazyModel {
            model,
            feature,
            loader: Mutex::new(loader),
            loaded: OnceLock::new(),
        }
    }

    fn get(&self) -> Result<Arc<T>, Problem> {
        let loaded = self.loaded.get_or_init(|| {
            let loader = self.loader.lock().unwrap_or_else(|p| p.into_inner()).take();
            match loader {
                Some(load) => load(),
                None => Err(String::new()),
            }
        });
        match loaded {
            Ok(model) => Ok(model.clone()),
            Err(e) if e.is_empty() => Err(Problem::not_implemented(format!(
                "{} is not available in this server: it needs {} (start `precedent serve` from a build that has it)",
                self.feature, self.model
            ))),
            Err(e) => Err(Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("{} could not be loaded: {e}", self.model),
            )),
        }
    }

    /// The model, loading it (off the async threads and outside the engine slots, so searches
    /// are served meanwhile) if this is the first request that needs it.
    pub async fn load(self: &Arc<Self>) -> Result<Arc<T>, Problem> {
        let lazy = self.clone();
        let model = self.model;
        tokio::task::spawn_blocking(move || lazy.get())
            .await
            .map_err(|e| Problem::internal(format!("loading {model} failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn loads_once_and_remembers_a_failure() {
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
        for _ in 0..3 {
            assert_eq!(&*ok.load().await.expect("loads"), "loaded");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let failing: Arc<LazyModel<str>> = Arc::new(LazyModel::new(
            "the thing",
            "doing it",
            Some(Arc::new(|| Err("no weights".to_owned()))),
        ));
        let problem = failing.load().await.expect_err("fails");
        assert_eq!(problem.status_code(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(problem
            .detail
            .contains("the thing could not be loaded: no weights"));
        assert_eq!(
            failing.load().await.expect_err("fails again").status_code(),
            StatusCode::SERVICE_UNAVAILABLE
        );

        let absent: Arc<LazyModel<str>> = Arc::new(LazyModel::new("the thing", "doing it", None));
        let problem = absent.load().await.expect_err("absent");
        assert_eq!(problem.status_code(), StatusCode::NOT_IMPLEMENTED);
        assert!(problem.detail.starts_with("doing it is not available"));
    }
}
