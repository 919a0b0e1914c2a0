//! Models the server loads on their first request ([`precedent_engine::lazy`]), loaded off the
//! async threads, and their load errors as HTTP answers: 501 when this server has no loader
//! for the model, 503 when its load failed.

use std::sync::Arc;

use axum::http::StatusCode;
pub use precedent_engine::lazy::{LazyModel, LoadError, Loader, ModelState};

use crate::problem::Problem;

/// The problem a failed load answers with.
fn problem(error: LoadError) -> Problem {
    match error {
        LoadError::Unavailable { .. } => Problem::not_implemented(error.to_string()),
        LoadError::Failed { .. } => {
            Problem::new(StatusCode::SERVICE_UNAVAILABLE, error.to_string())
        }
    }
}

/// The model, loading it (off the async threads and outside the engine slots, so searches
/// are served meanwhile) if this is the first request that needs it.
pub async fn load<T: ?Sized + Send + Sync + 'static>(
    lazy: &Arc<LazyModel<T>>,
) -> Result<Arc<T>, Problem> {
    let model = lazy.model();
    let lazy = lazy.clone();
    tokio::task::spawn_blocking(move || lazy.get().map_err(problem))
        .await
        .map_err(|e| Problem::internal(format!("loading {model} failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_failed_load_is_503_and_a_missing_loader_501() {
        let failing: Arc<LazyModel<str>> = Arc::new(LazyModel::new(
            "the thing",
            "doing it",
            Some(Arc::new(|| Err("no weights".to_owned()))),
        ));
        let problem = load(&failing).await.expect_err("fails");
        assert_eq!(problem.status_code(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(problem
            .detail
            .contains("the thing could not be loaded: no weights"));
        let absent: Arc<LazyModel<str>> = Arc::new(LazyModel::new("the thing", "doing it", None));
        let problem = load(&absent).await.expect_err("absent");
        assert_eq!(problem.status_code(), StatusCode::NOT_IMPLEMENTED);
        assert!(problem.detail.starts_with("doing it is not available"));
    }
}
