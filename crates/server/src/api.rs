//! The JSON API under `/v1`: request and response shapes (which generate the OpenAPI document)
//! and the handlers. Handlers validate, authorize, then run engine work on the blocking pool
//! behind a semaphore sized to the cores, so a burst of searches queues instead of thrashing.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use precedent_engine::compare::{word_diff, DiffOptions};
use precedent_engine::compare_view;
// The comparison's shapes are the engine's ([`precedent_engine::compare_view`]).
pub use precedent_engine::compare_view::{CompareResponse, DiffOp};
use precedent_engine::redline::{redline_docx, RedlineHeading, DOCX_MEDIA_TYPE};
use precedent_engine::search::FilterError;
use precedent_engine::spelling::Correction;
use precedent_library::Filter;
use precedent_rank::Pipeline;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::{authorize, Caller};
use crate::keys::Role;
use crate::problem::Problem;
use crate::ratings::{export, new_rating, ExportError, Rating};
use crate::state::LibraryService;
use crate::AppState;
// The hit and clause shapes are the engine's ([`precedent_engine::hits`]); the API answers with
// them as they are.
use precedent_engine::hits::ClauseMeta;
pub use precedent_engine::hits::{
    Citation, ClauseContext, ClauseType, ClauseView, Explanation, FacetValue, Facets,
    ReferencedSection, SearchHit, Span, StageScoreView,
};

/// Longest query or pasted text accepted (characters); a whole contract belongs in /v1/review.
pub const MAX_QUERY_CHARS: usize = 20_000;
/// Most hits one request may ask for.
pub const MAX_K: usize = 100;

fn default_k() -> usize {
    10
}

/// The request's filters as the engine checks them ([`precedent_engine::search::checked_filter`]):
/// a refusal is a 400 whose `suggestions` are the CUAD names of a common alias.
fn checked_filter(filters: &Filter) -> Result<Filter, Problem> {
    precedent_engine::search::checked_filter(filters).map_err(filter_problem)
}

/// The 400 of a refused filter or clause type.
pub(crate) fn filter_problem(e: FilterError) -> Problem {
    Problem::bad_request(e.message).with_suggestions(e.suggestions)
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// What the lawyer is looking for, e.g. "liability cap is based on purchase price".
    pub query: String,
    /// Number of clauses to return (1..=100).
    #[serde(default = "default_k")]
    pub k: usize,
    /// Library name; by default the caller's key's library.
    #[serde(default)]
    pub library: Option<String>,
    /// bm25, dense, hybrid, hybrid-norm, hybrid+types or learned (every pipeline of `precedent
    /// search` but the CLI-only LLM judges). By default the library's: learned with vectors
    /// (the ACORD ranker on the ACORD corpus, the contracts ranker on libraries of ingested
    /// contracts; with a ranker named at start, learned only where it fits, else
    /// hybrid+types), else bm25. The response's `pipeline` names the stages that answered
    /// (e.g. "hybrid+learned").
    #[serde(default)]
    pub pipeline: Option<String>,
    /// Rerank the top candidates with the server's cross-encoder (needs --rerank-model).
    #[serde(default)]
    pub rerank: bool,
    #[serde(default)]
    pub filters: Filter,
    /// Return word-for-word copies of a clause as hits of their own instead of folding them
    /// into the first hit with their words (`copies`).
    #[serde(default)]
    pub keep_duplicates: bool,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchResponse {
    pub query: String,
    pub library: String,
    pub pipeline: String,
    pub took_ms: f64,
    pub hits: Vec<SearchHit>,
    pub facets: Facets,
    /// The query as ranked, when misspelt words were corrected against the library's words or
    /// the query was written in search syntax (`corrected_how` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrected_query: Option<String>,
    /// What was done to the query when `corrected_query` is given: "spelling corrected",
    /// "search syntax read" (`AND`, `OR`, `NOT`, connectors, truncation), or both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrected_how: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SimilarRequest {
    /// Find clauses like this clause of the library...
    #[serde(default)]
    pub clause_id: Option<String>,
    /// ...or like this text (a lawyer's own draft).
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default = "default_k")]
    pub k: usize,
    #[serde(default)]
    pub library: Option<String>,
    #[serde(default)]
    pub pipeline: Option<String>,
    #[serde(default)]
    pub filters: Filter,
    /// As in `SearchRequest`.
    #[serde(default)]
    pub keep_duplicates: bool,
}

/// One side of a comparison: a clause of the library or pasted text.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareSide {
    #[serde(default)]
    pub clause_id: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    pub left: CompareSide,
    pub right: CompareSide,
    #[serde(default)]
    pub library: Option<String>,
    /// Words that differ only in capitals match (default true): an all-caps disclaimer and the
    /// same words in sentence case are the same clause. Each side is still shown as written.
    #[serde(default = "yes")]
    pub ignore_case: bool,
    /// Differences in spacing (double spaces, line breaks) are no differences (default true).
    #[serde(default = "yes")]
    pub ignore_whitespace: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ClauseResponse {
    pub library: String,
    pub clause: ClauseView,
    /// The clause in its source contract, when the library knows the source.
    pub context: Option<ClauseContext>,
}

#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ClauseParams {
    /// Library name; by default the caller's key's library.
    pub library: Option<String>,
    /// Characters of context on each side (default 1500, at most 20000).
    pub context_chars: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RatingRequest {
    pub query: String,
    pub clause_id: String,
    /// 1..=5 stars.
    pub stars: u8,
    #[serde(default)]
    pub library: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RatingResponse {
    pub library: String,
    pub rating: Rating,
    /// Ratings now stored in this library.
    pub stored: usize,
}

#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RatingsParams {
    pub library: Option<String>,
    /// qrels (TSV, default), queries (BEIR queries.jsonl) or jsonl (the raw log).
    pub format: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LibraryInfo {
    pub name: String,
    pub clauses: usize,
    pub pipelines: Vec<String>,
    pub default_pipeline: String,
    /// The caller's role on this library (absent on /healthz).
    pub role: Option<Role>,
}

/// `/healthz`: `status` alone without a key; the rest for an admin key (or to anyone with
/// `serve --public-status`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Health {
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub libraries: Option<Vec<LibraryInfo>>,
    /// The models loaded on demand (`serve --preload` loads them at start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<OnDemandStates>,
}

/// Where each on-demand model is: not_loaded, loading, ready, failed (with its reason) or
/// unavailable.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OnDemandStates {
    /// The CUAD clause typer behind /v1/review.
    pub clause_typer: crate::lazy::ModelState,
    /// The UNFAIR-ToS classifier behind /v1/review of terms of service.
    pub unfair_tos: crate::lazy::ModelState,
    /// The single-clause classifier behind /v1/classify.
    pub clause_classifier: crate::lazy::ModelState,
    /// The clause classifier that queries naming a CUAD clause type read (loaded on the first
    /// such query, or at start with `serve --preload`); until it is ready they rank without it.
    pub query_clause_types: crate::lazy::ModelState,
}

fn library_info(service: &LibraryService, role: Option<Role>) -> LibraryInfo {
    LibraryInfo {
        name: service.name.clone(),
        clauses: service.library.len(),
        pipelines: service.pipelines.keys().cloned().collect(),
        default_pipeline: service.default_pipeline.clone(),
        role,
    }
}

/// Runs engine work on the blocking pool, at most one job per core at a time.
pub(crate) async fn run_blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> Result<T, Problem> + Send + 'static,
) -> Result<T, Problem> {
    let _permit = state
        .engine_slots
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| Problem::internal("the server is shutting down"))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Problem::internal(format!("the engine task failed: {e}")))?
}

fn check_k(k: usize) -> Result<usize, Problem> {
    if k == 0 || k > MAX_K {
        return Err(Problem::bad_request(format!(
            "k must be between 1 and {MAX_K}, got {k}"
        )));
    }
    Ok(k)
}

pub(crate) fn check_text(what: &str, text: &str) -> Result<(), Problem> {
    if text.trim().is_empty() {
        return Err(Problem::bad_request(format!("{what} is empty")));
    }
    // Punctuation alone ("?!") is no clause and no query: a classifier would still type it
    // and a rating would be stored under it, answers that read as findings.
    if !precedent_rank::has_words(text) {
        return Err(Problem::bad_request(format!(
            "{what} has no words (only punctuation or symbols)"
        )));
    }
    let chars = text.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(Problem::bad_request(format!(
            "{what} has {chars} characters; at most {MAX_QUERY_CHARS} are accepted (upload whole contracts to /v1/review)"
        )));
    }
    Ok(())
}

fn engine_error(e: impl std::fmt::Display) -> Problem {
    Problem::internal(format!("search failed: {e}"))
}

/// Reads a clause by row and shapes it for the API ([`precedent_engine::hits::clause_view`]).
fn clause_view(service: &LibraryService, row: u32) -> Result<(ClauseView, ClauseMeta), Problem> {
    precedent_engine::hits::clause_view(&service.library, row).map_err(engine_error)
}

/// Ranks and renders the page ([`precedent_engine::hits::ranked_hits`]); an empty query, or one
/// of no words, is the caller's mistake (400), anything else the server's.
fn ranked_hits(
    service: &LibraryService,
    pipeline: &Pipeline,
    ranking: &Ranking,
) -> Result<(Vec<SearchHit>, Facets, Option<Correction>), Problem> {
    let request = precedent_engine::search::Request {
        query: &ranking.query,
        k: ranking.k,
        filter: &ranking.filter,
        row_ok: None,
        exclude: ranking.exclude,
        keep_duplicates: ranking.keep_duplicates,
        spelling: if ranking.correct_spelling {
            service.embedder.as_deref()
        } else {
            None
        },
    };
    precedent_engine::hits::ranked_hits(
        &service.library,
        &service.analyzer,
        &service.explainer,
        pipeline,
        &request,
    )
    .map_err(|e| match e.refused_query(ranking.exclude.is_some()) {
        Some(why) => Problem::bad_request(why),
        None => engine_error(e),
    })
}

fn row_of(service: &LibraryService, id: &str) -> Result<u32, Problem> {
    service.library.store().row(id).ok_or_else(|| {
        Problem::not_found(format!("library {:?} has no clause {id:?}", service.name))
    })
}

#[utoipa::path(
    post, path = "/v1/search", tag = "search",
    request_body = SearchRequest,
    responses(
        (status = 200, description = "Ranked clauses", body = SearchResponse),
        (status = 400, description = "Invalid request", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No or unknown API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Key not valid for this library or role", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn search(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(request): Json<SearchRequest>,
) -> Result<Json<SearchResponse>, Problem> {
    let Caller { service, .. } =
        authorize(&state, &headers, request.library.as_deref(), Role::Read)?;
    check_text("query", &request.query)?;
    let k = check_k(request.k)?;
    let filter = checked_filter(&request.filters)?;
    let pipeline = service
        .pipeline(request.pipeline.as_deref(), request.rerank)
        .map_err(Problem::bad_request)?;
    let ranking = Ranking {
        query: request.query,
        k,
        filter,
        exclude: None,
        keep_duplicates: request.keep_duplicates,
        correct_spelling: true,
    };
    search_response(&state, service, pipeline, ranking).await
}

/// What `/v1/search` and `/v1/similar` rank: the query text, how many hits, the filters, a
/// clause to leave out (the one `similar` starts from) and whether copies are folded.
struct Ranking {
    query: String,
    k: usize,
    filter: Filter,
    exclude: Option<u32>,
    keep_duplicates: bool,
    /// A lawyer's query is spell-checked; a clause's text (`similar`) is not.
    correct_spelling: bool,
}

/// Ranks on the blocking pool and answers with the hits, the facets and the time taken.
async fn search_response(
    state: &AppState,
    service: Arc<LibraryService>,
    pipeline: Arc<Pipeline>,
    ranking: Ranking,
) -> Result<Json<SearchResponse>, Problem> {
    let started = Instant::now();
    let (svc, pipe) = (service.clone(), pipeline.clone());
    let (hits, facets, query, corrected) = run_blocking(state, move || {
        let (hits, facets, corrected) = ranked_hits(&svc, &pipe, &ranking)?;
        Ok((hits, facets, ranking.query, corrected))
    })
    .await?;
    Ok(Json(SearchResponse {
        query,
        library: service.name.clone(),
        pipeline: pipeline.name().to_owned(),
        took_ms: started.elapsed().as_secs_f64() * 1e3,
        hits,
        facets,
        corrected_how: corrected.as_ref().map(|c| c.what().to_owned()),
        corrected_query: corrected.map(|c| c.text),
    }))
}

#[utoipa::path(
    post, path = "/v1/similar", tag = "search",
    request_body = SimilarRequest,
    responses(
        (status = 200, description = "Clauses like the given clause or text (the clause itself excluded)", body = SearchResponse),
        (status = 400, description = "Invalid request", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such clause", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn similar(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(request): Json<SimilarRequest>,
) -> Result<Json<SearchResponse>, Problem> {
    let Caller { service, .. } =
        authorize(&state, &headers, request.library.as_deref(), Role::Read)?;
    let k = check_k(request.k)?;
    let filter = checked_filter(&request.filters)?;
    let (text, exclude) =
        match (&request.clause_id, &request.text) {
            (Some(id), None) => {
                let row = row_of(&service, id)?;
                let doc = service.library.store().clause(row).map_err(engine_error)?;
                (precedent_library::indexed_text(&doc), Some(row))
            }
            (None, Some(text)) => {
                check_text("text", text)?;
                (text.clone(), None)
            }
            _ => return Err(Problem::bad_request(
                "give exactly one of clause_id (a clause of the library) or text (your own draft)",
            )),
        };
    let pipeline = service
        .pipeline(request.pipeline.as_deref(), false)
        .map_err(Problem::bad_request)?;
    let ranking = Ranking {
        query: text,
        k,
        filter,
        exclude,
        keep_duplicates: request.keep_duplicates,
        correct_spelling: false,
    };
    search_response(&state, service, pipeline, ranking).await
}

#[utoipa::path(
    get, path = "/v1/clauses/{id}", tag = "clauses",
    params(("id" = String, Path, description = "Clause id"), ClauseParams),
    responses(
        (status = 200, description = "The clause, with context in its source contract when known", body = ClauseResponse),
        (status = 404, description = "No such clause", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn clause(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(params): Query<ClauseParams>,
) -> Result<Json<ClauseResponse>, Problem> {
    let Caller { service, .. } =
        authorize(&state, &headers, params.library.as_deref(), Role::Read)?;
    let row = row_of(&service, &id)?;
    let context_chars = params.context_chars.unwrap_or(1500).min(20_000);
    let svc = service.clone();
    let (view, context) = run_blocking(&state, move || {
        let (view, meta) = clause_view(&svc, row)?;
        let context = precedent_engine::context::clause_context(
            meta.source_path.as_deref(),
            meta.source_fingerprint.as_deref(),
            meta.start,
            meta.end,
            context_chars,
        );
        Ok((view, context))
    })
    .await?;
    Ok(Json(ClauseResponse {
        library: service.name.clone(),
        clause: view,
        context,
    }))
}

/// One side's text, and how the redline names it (the clause's citation, or "your text").
fn side_text(
    service: &LibraryService,
    side: &CompareSide,
    name: &str,
) -> Result<(String, String), Problem> {
    match (&side.clause_id, &side.text) {
        (Some(id), None) => {
            // The clause as the lawyer reads it: its own text, without referenced sections.
            let row = row_of(service, id)?;
            let view = clause_view(service, row)?.0;
            Ok((view.text, view.citation.text))
        }
        (None, Some(text)) => {
            check_text(name, text)?;
            Ok((text.clone(), "your text".to_owned()))
        }
        _ => Err(Problem::bad_request(format!(
            "{name}: give exactly one of clause_id or text"
        ))),
    }
}

/// What `POST /v1/compare` answers with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompareFormat {
    /// The differences as JSON ([`CompareResponse`]).
    #[default]
    Json,
    /// A Word redline (DOCX, as an attachment) whose differences are tracked changes: the left
    /// side is the original, the right side the revision.
    Docx,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct CompareQuery {
    /// json (default) or docx: the comparison as a Word document with tracked changes.
    #[serde(default)]
    pub format: CompareFormat,
}

#[utoipa::path(
    post, path = "/v1/compare", tag = "clauses",
    request_body = CompareRequest,
    params(CompareQuery),
    responses(
        (status = 200, description = "Word-level comparison of two clauses, or a clause and your text; with `format=docx`, a Word redline with the differences as tracked changes", body = CompareResponse),
        (status = 400, description = "Invalid request", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such clause", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "As many comparisons as the server runs at once are running; try again after Retry-After seconds", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn compare(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<CompareQuery>,
    Json(request): Json<CompareRequest>,
) -> Result<Response, Problem> {
    let Caller { service, .. } =
        authorize(&state, &headers, request.library.as_deref(), Role::Read)?;
    let (left_text, left_name) = side_text(&service, &request.left, "left")?;
    let (right_text, right_name) = side_text(&service, &request.right, "right")?;
    // Refused at once when all compare slots are taken: queued diffs would hold the engine's
    // slots and make searches wait behind them.
    let _compare_slot = state
        .compare_slots
        .clone()
        .try_acquire_owned()
        .map_err(|_| {
            Problem::busy(
                "the server is comparing as many texts as it takes at once; try again in a moment",
                1,
            )
        })?;
    let (runs, similarity) = run_blocking(&state, {
        let (l, r) = (left_text.clone(), right_text.clone());
        let options = DiffOptions {
            ignore_case: request.ignore_case,
            ignore_whitespace: request.ignore_whitespace,
        };
        move || Ok(word_diff(&l, &r, options))
    })
    .await?;
    if query.format == CompareFormat::Docx {
        let heading = RedlineHeading::for_sides(&left_name, &right_name, similarity);
        let docx = redline_docx(&runs, &heading)
            .map_err(|e| Problem::internal(format!("writing the redline: {e}")))?;
        return Ok((
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(DOCX_MEDIA_TYPE),
                ),
                (
                    header::CONTENT_DISPOSITION,
                    HeaderValue::from_static("attachment; filename=\"redline.docx\""),
                ),
            ],
            docx,
        )
            .into_response());
    }
    let ops = compare_view::ops(runs);
    Ok(Json(CompareResponse {
        left_text,
        right_text,
        ops,
        similarity,
    })
    .into_response())
}

#[utoipa::path(
    post, path = "/v1/ratings", tag = "ratings",
    request_body = RatingRequest,
    responses(
        (status = 201, description = "Stored durably (fsynced) before this answer", body = RatingResponse),
        (status = 400, description = "Invalid rating", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The key may not rate", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such clause", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn rate(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(request): Json<RatingRequest>,
) -> Result<(StatusCode, Json<RatingResponse>), Problem> {
    let Caller { service, key } =
        authorize(&state, &headers, request.library.as_deref(), Role::Rate)?;
    check_text("query", &request.query)?;
    let rating = new_rating(&request.query, request.clause_id, request.stars, key.id)
        .map_err(Problem::bad_request)?;
    row_of(&service, &rating.clause_id)?;
    let svc = service.clone();
    let stored = rating.clone();
    // Not behind the engine semaphore: an fsync is I/O, not CPU.
    tokio::task::spawn_blocking(move || svc.ratings.append(&stored))
        .await
        .map_err(|e| Problem::internal(format!("storing the rating failed: {e}")))?
        .map_err(|e| Problem::internal(format!("storing the rating failed: {e}")))?;
    let stored = service.ratings.len();
    Ok((
        StatusCode::CREATED,
        Json(RatingResponse {
            library: service.name.clone(),
            rating,
            stored,
        }),
    ))
}

#[utoipa::path(
    get, path = "/v1/ratings", tag = "ratings",
    params(RatingsParams),
    responses(
        (status = 200, description = "Ratings as qrels TSV (query-id corpus-id score, latest rating per pair, stars-1), BEIR queries.jsonl, or the raw JSONL log", content_type = "text/tab-separated-values"),
        (status = 403, description = "Needs an admin key", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn export_ratings(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(params): Query<RatingsParams>,
) -> Result<Response, Problem> {
    let Caller { service, .. } =
        authorize(&state, &headers, params.library.as_deref(), Role::Admin)?;
    let format = params.format.unwrap_or_else(|| "qrels".to_owned());
    let svc = service.clone();
    let ratings = tokio::task::spawn_blocking(move || svc.ratings.read_all())
        .await
        .map_err(|e| Problem::internal(e.to_string()))?
        .map_err(|e| Problem::internal(e.to_string()))?;
    let (content_type, body) = export(&ratings, &format).map_err(|e| match e {
        ExportError::UnknownFormat(_) => Problem::bad_request(e.to_string()),
        ExportError::Writing(_) => Problem::internal(e.to_string()),
    })?;
    Ok(([(header::CONTENT_TYPE, content_type)], body).into_response())
}

#[utoipa::path(
    get, path = "/v1/libraries", tag = "libraries",
    responses(
        (status = 200, description = "The libraries this key may use, with its role", body = Vec<LibraryInfo>),
        (status = 401, description = "No or unknown API key", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn libraries(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Vec<LibraryInfo>>, Problem> {
    let Caller { service, key } = authorize(&state, &headers, None, Role::Read)?;
    Ok(Json(vec![library_info(&service, Some(key.role))]))
}

/// Whether the caller may see the server's details (library names and sizes, model states,
/// request metrics): anyone with `serve --public-status`, else an admin key of a served library.
/// `Ok(false)` for a request without a key (`/healthz` then answers only that it is up); a key
/// that is not an admin's is refused as it would be on the API.
fn may_see_details(state: &AppState, headers: &HeaderMap) -> Result<bool, Problem> {
    if state.public_status {
        return Ok(true);
    }
    if !headers.contains_key(header::AUTHORIZATION) {
        return Ok(false);
    }
    authorize(state, headers, None, Role::Admin)?;
    Ok(true)
}

#[utoipa::path(
    get, path = "/healthz", tag = "operations",
    responses(
        (status = 200, description = "The server is up; with an admin key (or `serve --public-status`) also the libraries it serves and the models' states", body = Health),
        (status = 401, description = "Unknown or revoked key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an admin key", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("api_key" = []))
)]
pub async fn healthz(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Health>, Problem> {
    if !may_see_details(&state, &headers)? {
        return Ok(Json(Health {
            status: "ok".into(),
            version: None,
            libraries: None,
            models: None,
        }));
    }
    Ok(Json(Health {
        status: "ok".into(),
        version: Some(env!("CARGO_PKG_VERSION").into()),
        libraries: Some(
            state
                .libraries
                .iter()
                .map(|s| library_info(&s.get(), None))
                .collect(),
        ),
        models: Some(OnDemandStates {
            clause_typer: state.reviewer.state(),
            unfair_tos: state.tos.state(),
            clause_classifier: state.classifier.state(),
            query_clause_types: state
                .query_types
                .as_ref()
                .map_or(crate::lazy::ModelState::Unavailable, |reader| {
                    reader.state().into()
                }),
        }),
    }))
}

#[utoipa::path(
    get, path = "/metrics", tag = "operations",
    responses(
        (status = 200, description = "Request counts and latencies (Prometheus text format)", content_type = "text/plain"),
        (status = 401, description = "No key (unless `serve --public-status`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an admin key", body = Problem, content_type = "application/problem+json"),
    ),
    security(("api_key" = []))
)]
pub async fn metrics(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    if !state.public_status {
        authorize(&state, &headers, None, Role::Admin)?;
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response())
}
