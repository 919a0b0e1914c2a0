//! Precedent as a service: one binary serving clause libraries over a JSON API under `/v1`
//! (described by `/openapi.json`, generated from the handlers), a web page for lawyers, API keys
//! with roles, durable ratings, `/healthz` and `/metrics`.
//!
//! The engine crates know nothing of HTTP; this crate knows nothing of CLI parsing. Models are
//! loaded once at startup and shared by every request; engine work runs on the blocking pool
//! behind a semaphore sized to the machine's cores.
//!
//! Robustness: every error is a problem-details JSON body; request bodies are size-limited per
//! route; a panic in a handler (there should be none) becomes a 500 problem instead of a dropped
//! connection.

pub mod api;
mod auth;
pub mod classify;
mod lazy;
pub mod market;
mod metrics;
pub mod problem;
pub mod review;
pub mod state;
mod web;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use tokio::sync::Semaphore;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;

pub use classify::{ClassifierLoader, TypeScore};
// Key and rating storage are the engine's; the server checks keys and takes ratings over HTTP.
pub use lazy::{LazyModel, Loader, ModelState};
pub use precedent_engine::keys::{self, KeyRecord, KeyStore, Role};
pub use precedent_engine::ratings;
pub use review::{Finding, ReviewKind, ReviewerLoader, TosLoader};
pub use state::{LibrarySpec, ModelOptions, ServedModelOptions};

use crate::metrics::Metrics;
use crate::problem::Problem;
use crate::state::{LibraryService, LibrarySlot};

/// Largest JSON request body (a pasted clause or draft is far smaller).
pub const JSON_BODY_LIMIT: usize = 1024 * 1024;
/// Largest contract upload for /v1/review.
pub const UPLOAD_LIMIT: usize = 25 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Config(String),
    #[error("{addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("server: {0}")]
    Io(#[from] std::io::Error),
}

/// Shared by all handlers.
#[derive(Clone)]
pub struct AppState {
    pub libraries: Arc<Vec<Arc<LibrarySlot>>>,
    metrics: Arc<Metrics>,
    /// One permit per core: engine work waits here rather than oversubscribing the CPU.
    engine_slots: Arc<Semaphore>,
    /// Comparisons running at once ([`ModelOptions::compare_limit`]): fewer than the cores, so
    /// a burst of long diffs leaves search a core; one more is refused (503) rather than queued.
    compare_slots: Arc<Semaphore>,
    reviewer: Arc<LazyModel<precedent_clause_types::ClauseTyper>>,
    /// The UNFAIR-ToS classifier behind terms-of-service reviews.
    tos: Arc<LazyModel<precedent_unfair::UnfairModel>>,
    classifier: Arc<LazyModel<precedent_clause_types::clause_classifier::ClauseClassifier>>,
    /// The clause-type reader of queries naming a CUAD type ([`ServedModelOptions::clause_types`]),
    /// for `/healthz` to say whether its model is there.
    query_types: Option<Arc<dyn precedent_learn::ClauseTypeReader>>,
    /// The detailed `/healthz` and `/metrics` need no key ([`ModelOptions::public_status`]).
    pub public_status: bool,
}

/// The models behind `/v1/review` and `/v1/classify`, loaded on their first request (training
/// them the first time takes minutes); a missing loader makes its endpoint answer 501.
#[derive(Clone, Default)]
pub struct OnDemandModels {
    /// The contract reviewer (the CUAD clause typer).
    pub reviewer: Option<ReviewerLoader>,
    /// The terms-of-service reviewer (the UNFAIR-ToS classifier).
    pub tos: Option<TosLoader>,
    /// The single-clause classifier.
    pub classifier: Option<ClassifierLoader>,
    /// Load both at start, in the background, instead of on their first request.
    pub preload: bool,
}

impl AppState {
    pub fn new(
        libraries: Vec<Arc<LibrarySlot>>,
        on_demand: OnDemandModels,
        query_types: Option<Arc<dyn precedent_learn::ClauseTypeReader>>,
    ) -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let state = AppState {
            libraries: Arc::new(libraries),
            metrics: Arc::new(Metrics::default()),
            engine_slots: Arc::new(Semaphore::new(cores)),
            compare_slots: Arc::new(Semaphore::new(default_compare_limit(cores))),
            reviewer: Arc::new(review::lazy_reviewer(on_demand.reviewer)),
            tos: Arc::new(review::lazy_tos(on_demand.tos)),
            classifier: Arc::new(classify::lazy_classifier(on_demand.classifier)),
            query_types,
            public_status: false,
        };
        if on_demand.preload {
            state.reviewer.preload();
            state.tos.preload();
            state.classifier.preload();
        }
        state
    }
}

/// Comparisons at once when `serve --compare-limit` is not given: one core fewer than the
/// machine has, at least one.
pub fn default_compare_limit(cores: usize) -> usize {
    cores.saturating_sub(1).max(1)
}

impl AppState {
    /// Allows `limit` comparisons at once (at least one).
    pub fn with_compare_limit(mut self, limit: usize) -> Self {
        self.compare_slots = Arc::new(Semaphore::new(limit.max(1)));
        self
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Precedent API",
        description = "Find precedent clauses, compare them, see a clause type's common formulations, rate them, review contracts and classify clauses. Every /v1 endpoint needs `Authorization: Bearer KEY` (keys are created with `precedent keys create`). Errors are RFC 9457 problem details."
    ),
    paths(
        api::search, api::similar, api::clause, api::compare, market::market_view, api::rate,
        api::export_ratings,
        review::review, classify::classify, api::libraries, api::healthz, api::metrics
    ),
    modifiers(&BearerAuth)
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key from `precedent keys create`"))
                    .build(),
            ),
        );
    }
}

/// The OpenAPI document of this API.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}

fn panic_to_problem(err: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = err
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    tracing::error!("a request handler panicked: {what}");
    Problem::internal("the server hit an internal error; the request was not completed")
        .into_response()
}

/// The whole application: API, page, OpenAPI, health and metrics.
pub fn router(state: AppState) -> Router {
    let json_limit = DefaultBodyLimit::max(JSON_BODY_LIMIT);
    let api = Router::new()
        .route("/v1/search", post(api::search))
        .route("/v1/similar", post(api::similar))
        .route("/v1/clauses/{id}", get(api::clause))
        .route("/v1/compare", post(api::compare))
        .route("/v1/market", post(market::market_view))
        .route("/v1/ratings", post(api::rate).get(api::export_ratings))
        .route("/v1/libraries", get(api::libraries))
        .route("/v1/classify", post(classify::classify))
        .layer(json_limit)
        .route(
            "/v1/review",
            post(review::review).layer(DefaultBodyLimit::max(UPLOAD_LIMIT)),
        )
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(api::metrics))
        .route("/openapi.json", get(openapi_json))
        .merge(web::routes());
    let metrics = state.metrics.clone();
    api.with_state(state)
        .layer(axum::middleware::map_response(
            problem::problem_for_plain_errors,
        ))
        .layer(axum::middleware::from_fn_with_state(
            metrics,
            metrics::record,
        ))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panic_to_problem,
        ))
}

/// Opens the libraries, loads models once, and serves until Ctrl-C or SIGTERM. `on_ready` is
/// called with the bound address (useful with port 0).
pub async fn serve(
    specs: &[LibrarySpec],
    models: &ModelOptions,
    addr: &str,
    on_demand: OnDemandModels,
    on_ready: impl FnOnce(SocketAddr, &[Arc<LibraryService>]),
) -> Result<(), ServeError> {
    let specs = specs.to_vec();
    let watch_every = models.watch_every;
    let query_types = models.models.clause_types.clone();
    let public_status = models.public_status;
    let compare_limit = models.compare_limit;
    let models = models.clone();
    let libraries = tokio::task::spawn_blocking(move || state::load_libraries(&specs, &models))
        .await
        .map_err(|e| ServeError::Config(format!("loading libraries failed: {e}")))??;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr: addr.to_owned(),
            source,
        })?;
    let local = listener.local_addr()?;
    let served: Vec<Arc<LibraryService>> = libraries.iter().map(|slot| slot.get()).collect();
    on_ready(local, &served);
    if let Some(every) = watch_every {
        tokio::spawn(watch_generations(libraries.clone(), every));
    }
    let mut state = AppState::new(libraries, on_demand, query_types);
    state.public_status = public_status;
    if let Some(limit) = compare_limit {
        state = state.with_compare_limit(limit);
    }
    let app = router(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(())
}

/// Serves each library's new generation once a writer commits one (ingest, `index --add`),
/// checking `CURRENT` every `every`. A generation that fails to load is logged and retried on
/// the next tick; the old one is served meanwhile.
async fn watch_generations(libraries: Vec<Arc<LibrarySlot>>, every: std::time::Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        for slot in &libraries {
            let slot = slot.clone();
            let name = slot.name().to_owned();
            match tokio::task::spawn_blocking(move || slot.refresh()).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    tracing::warn!("library {name:?}: keeping the generation served: {e}")
                }
                Err(e) => tracing::warn!("library {name:?}: reloading failed: {e}"),
            }
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
