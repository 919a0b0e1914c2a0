//! `POST /v1/market`: a clause type's common formulations in a library and where a draft stands
//! among them ([`precedent_engine::market`]); the page's Market tab shows it.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use precedent_engine::market::{market, MarketOptions};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::{check_text, checked_clause_type, run_blocking};
use crate::auth::{authorize, Caller};
use crate::keys::Role;
use crate::problem::Problem;
use crate::AppState;

/// Formulations a request may ask for at most.
const MAX_FORMULATIONS: usize = 12;

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

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FormShareView {
    /// "mutual" or "carve-out".
    pub form: String,
    /// Share of the formulation's clauses written in that form (0..1).
    pub share: f32,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FormulationView {
    pub clauses: usize,
    pub contracts: usize,
    /// Share of the type's clauses (0..1).
    pub share: f32,
    /// The clause closest to the formulation's centre: id, citation and own text.
    pub representative_id: String,
    pub representative_citation: Option<String>,
    pub representative_text: String,
    /// Words most of these clauses use and the type's other clauses use less.
    pub distinctive_words: Vec<String>,
    pub forms: Vec<FormShareView>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DraftStandingView {
    /// Index into `formulations` of the closest formulation.
    pub closest: usize,
    pub similarity: f32,
    /// How common that formulation is (0..1).
    pub share: f32,
    /// Words most clauses of that formulation use that the draft does not.
    pub lacks: Vec<String>,
    /// Drafting forms the draft is written in ("mutual", "carve-out").
    pub forms: Vec<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketResponse {
    pub library: String,
    pub clause_type: String,
    pub clauses: usize,
    pub contracts: usize,
    /// Most common first.
    pub formulations: Vec<FormulationView>,
    pub draft: Option<DraftStandingView>,
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
    let clause_type = checked_clause_type("clause_type", &request.clause_type, "")?;
    if let Some(draft) = &request.draft {
        check_text("draft", draft)?;
    }
    let formulations = request.formulations.unwrap_or(5);
    if !(1..=MAX_FORMULATIONS).contains(&formulations) {
        return Err(Problem::bad_request(format!(
            "formulations must be 1..={MAX_FORMULATIONS}"
        )));
    }
    let library = service.library.clone();
    let draft = request.draft.clone();
    let found = run_blocking(&state, move || {
        let options = MarketOptions {
            formulations,
            ..MarketOptions::default()
        };
        market(&library, clause_type, draft.as_deref(), &options)
            .map_err(|e| Problem::internal(e.to_string()))
    })
    .await?;
    Ok(Json(MarketResponse {
        library: service.name.clone(),
        clause_type: found.clause_type,
        clauses: found.clauses,
        contracts: found.contracts,
        formulations: found
            .formulations
            .into_iter()
            .map(|f| FormulationView {
                clauses: f.clauses,
                contracts: f.contracts,
                share: f.share,
                representative_id: f.representative.id,
                representative_citation: f.representative.citation,
                representative_text: f.representative.text,
                distinctive_words: f.distinctive_words,
                forms: f
                    .forms
                    .into_iter()
                    .map(|s| FormShareView {
                        form: s.form.to_owned(),
                        share: s.share,
                    })
                    .collect(),
            })
            .collect(),
        draft: found.draft.map(|d| DraftStandingView {
            closest: d.closest,
            similarity: d.similarity,
            share: d.share,
            lacks: d.lacks,
            forms: d.forms.into_iter().map(str::to_owned).collect(),
        }),
    }))
}
