//! `POST /v1/market`: a clause type's common formulations in a library and where a draft stands
//! among them ([`precedent_engine::market`]); the page's Market tab shows it.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use precedent_engine::market::{market, MarketOptions};
// The answer's shapes are the engine's ([`precedent_engine::market_view`]).
pub use precedent_engine::market_view::{
    DraftStandingView, FormShareView, FormulationView, MarketResponse,
};
use serde::Deserialize;
use utoipa::ToSchema;

use precedent_engine::search::checked_clause_type;

use crate::api::{check_text, filter_problem, run_blocking};
use crate::auth::{authorize, Caller};
use crate::keys::Role;
use crate::problem::Problem;
use crate::AppState;

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarketRequest {
    /// A CUAD clause type ("Cap on Liability"); a common alias is refused with the CUAD names.
    pub clause_type: String,
    /// Your draft of the clause: where it stands among the formulations.
    #[serde(default)]
    pub draft: Option<String>,
    /// Formulations at most (1..=12, default 5).
    #[serde(default)]
    pub formulations: Option<usize>,
    #[serde(default)]
    pub library: Option<String>,
}

#[utoipa::path(
    post, path = "/v1/market", tag = "clauses",
    request_body = MarketRequest,
    responses(
        (status = 200, description = "The clause type's common formulations, and where the draft stands", body = MarketResponse),
        (status = 400, description = "Not a CUAD clause type, or an invalid draft", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn market_view(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(request): Json<MarketRequest>,
) -> Result<Json<MarketResponse>, Problem> {
    let Caller { service, .. } =
        authorize(&state, &headers, request.library.as_deref(), Role::Read)?;
    let clause_type =
        checked_clause_type("clause_type", &request.clause_type, "").map_err(filter_problem)?;
    if let Some(draft) = &request.draft {
        check_text("draft", draft)?;
    }
    let options = MarketOptions::asking(
        request
            .formulations
            .unwrap_or(MarketOptions::default().formulations),
    )
    .map_err(Problem::bad_request)?;
    let library = service.library.clone();
    let draft = request.draft.clone();
    let found = run_blocking(&state, move || {
        market(&library, clause_type, draft.as_deref(), &options)
            .map_err(|e| Problem::internal(e.to_string()))
    })
    .await?;
    Ok(Json(MarketResponse::new(service.name.clone(), found)))
}
