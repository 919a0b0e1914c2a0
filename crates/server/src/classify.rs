//! `POST /v1/classify`: the CUAD clause types of clauses on their own ("is this a
//! Non-Compete?"), for a lawyer holding a clause rather than a contract: the web page's
//! "Classify a clause" box and `precedent classify` over HTTP.
//!
//! The classifier is the one `precedent classify` reads (loaded by the engine's
//! [`precedent_engine::ClauseModels`]); `precedent serve` passes a loader, called on the first
//! request (the first training takes minutes, and nobody may ever classify).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use precedent_clause_types::clause_classifier::ClauseClassifier;
use precedent_engine::classify_view;
// The answer's shapes are the engine's ([`precedent_engine::classify_view`]).
pub use precedent_engine::classify_view::{ClassifiedClause, ClassifyResponse, TypeScore};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::api::{check_text, run_blocking};
use crate::auth::authorize;
use crate::keys::Role;
use crate::lazy::{LazyModel, Loader};
use crate::problem::Problem;
use crate::AppState;

/// Most clauses one request may classify (a clause's types take ~0.1-0.4 s on 2 cores).
pub const MAX_CLAUSES: usize = 64;

/// Loads the classifier; called once, on the first classify request.
pub type ClassifierLoader = Loader<ClauseClassifier>;

pub(crate) fn lazy_classifier(loader: Option<ClassifierLoader>) -> LazyModel<ClauseClassifier> {
    LazyModel::new(
        "the CUAD clause classifier",
        "clause classification",
        loader,
    )
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassifyRequest {
    /// The clauses, each read on its own (1 to 64, each at most 20,000 characters).
    pub texts: Vec<String>,
    /// One threshold (0..1) for every category instead of each category's own; 0.5 keeps only
    /// the surer types.
    #[serde(default)]
    pub threshold: Option<f32>,
    /// Every category with its confidence, not only those reaching the threshold.
    #[serde(default)]
    pub all: bool,
}

fn check_request(request: &ClassifyRequest) -> Result<(), Problem> {
    if request.texts.is_empty() || request.texts.len() > MAX_CLAUSES {
        return Err(Problem::bad_request(format!(
            "texts must hold 1 to {MAX_CLAUSES} clauses, got {}",
            request.texts.len()
        )));
    }
    for (i, text) in request.texts.iter().enumerate() {
        check_text(&format!("texts[{i}]"), text)?;
    }
    if let Some(t) = request.threshold {
        if !(0.0..=1.0).contains(&t) {
            return Err(Problem::bad_request(format!(
                "threshold is a confidence between 0 and 1, got {t}"
            )));
        }
    }
    Ok(())
}

#[utoipa::path(
    post, path = "/v1/classify", tag = "review",
    request_body = ClassifyRequest,
    responses(
        (status = 200, description = "The CUAD clause types of each clause", body = ClassifyResponse),
        (status = 400, description = "Invalid request", body = Problem, content_type = "application/problem+json"),
        (status = 501, description = "This server has no clause classifier", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The clause classifier could not be loaded", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn classify(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(request): Json<ClassifyRequest>,
) -> Result<Json<ClassifyResponse>, Problem> {
    authorize(&state, &headers, None, Role::Read)?;
    check_request(&request)?;
    let classifier = crate::lazy::load(&state.classifier).await?;
    run_blocking(&state, move || {
        let texts: Vec<&str> = request.texts.iter().map(String::as_str).collect();
        classify_view::classify(&classifier, &texts, request.threshold, request.all)
            .map(Json)
            .map_err(|e| Problem::internal(format!("classifying failed: {e:#}")))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(texts: &[&str], threshold: Option<f32>) -> ClassifyRequest {
        ClassifyRequest {
            texts: texts.iter().map(|t| t.to_string()).collect(),
            threshold,
            all: false,
        }
    }

    #[test]
    fn requests_are_checked_before_the_model_loads() {
        assert!(check_request(&request(&["Governing law: New York."], Some(0.5))).is_ok());
        let detail = |r: ClassifyRequest| check_request(&r).expect_err("refused").detail;
        assert!(detail(request(&[], None)).contains("1 to 64"));
        assert!(detail(request(&["fine", "  \n"], None)).contains("texts[1] is empty"));
        assert!(detail(request(&["fine"], Some(1.5))).contains("between 0 and 1"));
        assert!(detail(request(&["fine"], Some(f32::NAN))).contains("between 0 and 1"));
        let many = vec!["a clause"; MAX_CLAUSES + 1];
        assert!(detail(request(&many, None)).contains("got 65"));
        let long = "word ".repeat(5_000);
        assert!(detail(request(&[&long], None)).contains("characters"));
    }
}
