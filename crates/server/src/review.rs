//! `POST /v1/review`: a lawyer uploads a contract (TXT, HTML, PDF, DOCX); the server reads it
//! with the same readers as ingestion, cuts it into clauses, and asks the clause typer which
//! CUAD clause types it contains and where.
//!
//! Terms of service get another review ([`ReviewKind`], detected or asked with `?kind=tos`):
//! each sentence scored by the UNFAIR-ToS classifier for LexGLUE's eight kinds of potentially
//! unfair term, the flagged ones returned as findings and summed up as a checklist.
//!
//! The findings are the engine's ([`precedent_engine::review`], as `precedent review` finds
//! them), kept as a checklist. `precedent serve` passes a loader for the typer, called on the
//! first review (training or loading a typer takes seconds to a minute, which a server start
//! should not pay when nobody reviews).

use axum::extract::{Multipart, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use precedent_clause_types::ClauseTyper;
use precedent_engine::review::to_csv;
use precedent_engine::review_view;
// The review's shapes are the engine's ([`precedent_engine::review_view`]).
pub use precedent_engine::review_view::{Finding, ReviewResponse, SectionView};
use precedent_unfair::UnfairModel;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::api::run_blocking;
use crate::auth::authorize;
use crate::keys::Role;
use crate::lazy::{LazyModel, Loader};
use crate::problem::Problem;
use crate::AppState;

/// Loads the clause typer; called once, on the first review request.
pub type ReviewerLoader = Loader<ClauseTyper>;

/// The reviewer, loaded on first use; `None` loader = review not available in this server.
pub(crate) fn lazy_reviewer(loader: Option<ReviewerLoader>) -> LazyModel<ClauseTyper> {
    LazyModel::new("the CUAD clause typer", "contract review", loader)
}

/// Loads the UNFAIR-ToS classifier; called once, on the first terms-of-service review.
pub type TosLoader = Loader<UnfairModel>;

/// The terms-of-service classifier, loaded on first use.
pub(crate) fn lazy_tos(loader: Option<TosLoader>) -> LazyModel<UnfairModel> {
    LazyModel::new(
        "the UNFAIR-ToS classifier",
        "terms-of-service review",
        loader,
    )
}

/// What the uploaded document is reviewed as ([`precedent_engine::documents::DocumentKind`]).
pub use precedent_engine::documents::DocumentKind as ReviewKind;

/// What `POST /v1/review` answers with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReviewFormat {
    /// The review as JSON ([`ReviewResponse`]).
    #[default]
    Json,
    /// The contract's checklist as a CSV file (`text/csv`, as an attachment): all 41 CUAD
    /// categories, present or absent, as `precedent review --checklist-csv` writes it.
    Csv,
    /// The review as a Word report (DOCX, as an attachment): the checklist table, each type
    /// found with its clauses, each type not found, as `precedent review --report-docx` writes it.
    Docx,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ReviewQuery {
    /// auto (default), contract or tos.
    #[serde(default)]
    pub kind: ReviewKind,
    /// json (default), csv (the checklist as CSV) or docx (the review as a Word report); csv
    /// and docx for contracts only.
    #[serde(default)]
    pub format: ReviewFormat,
}

struct Upload {
    file_name: String,
    bytes: Vec<u8>,
}

async fn read_upload(mut multipart: Multipart) -> Result<Upload, Problem> {
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| Problem::new(e.status(), format!("reading the upload: {}", e.body_text())))?
    {
        if field.name() != Some("file") {
            continue;
        }
        let file_name = field
            .file_name()
            .map(str::to_owned)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| {
                Problem::bad_request("the `file` part has no file name (it tells the format)")
            })?;
        let bytes = field.bytes().await.map_err(|e| {
            Problem::new(e.status(), format!("reading the upload: {}", e.body_text()))
        })?;
        return Ok(Upload {
            file_name,
            bytes: bytes.to_vec(),
        });
    }
    Err(Problem::bad_request(
        "send the contract as multipart/form-data with a part named `file`",
    ))
}

/// Keeps the most confident, non-overlapping spans of each category.
#[utoipa::path(
    post, path = "/v1/review", tag = "review",
    request_body(content = String, description = "multipart/form-data with a `file` part (TXT, HTML, PDF or DOCX, at most 25 MiB)", content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The contract's text, its sections, the CUAD clause types found and its checklist; with `format=csv`, the checklist as a `text/csv` attachment; with `format=docx`, the review as a Word report", body = ReviewResponse),
        (status = 400, description = "No file part, or `format=csv`/`docx` for terms of service", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Unsupported file type", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Larger than the upload limit, or a DOCX whose text inflates past the reader's limit", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Unreadable file (corrupt, scanned PDF without text, empty)", body = Problem, content_type = "application/problem+json"),
        (status = 501, description = "This server has no clause typer (or, for terms of service, no UNFAIR-ToS classifier)", body = Problem, content_type = "application/problem+json"),
    ),
    params(ReviewQuery),
    security(("api_key" = []))
)]
pub async fn review(
    State(state): State<AppState>,
    Query(query): Query<ReviewQuery>,
    headers: HeaderMap,
    multipart: Multipart,
) -> Result<Response, Problem> {
    authorize(&state, &headers, None, Role::Read)?;
    let upload = read_upload(multipart).await?;
    let path = std::path::PathBuf::from(&upload.file_name);
    let format = precedent_contracts::Format::from_path(&path).ok_or_else(|| {
        Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "{}: unsupported file type (expected .txt, .htm/.html, .pdf or .docx)",
                upload.file_name
            ),
        )
    })?;
    let bytes = upload.bytes;
    let document = run_blocking(&state, move || {
        precedent_contracts::read_bytes(&path, format, &bytes).map_err(|e| {
            // A document that inflates past the reader's limit is too large, not unreadable.
            let status = match e {
                precedent_contracts::ReadError::InflatesTooLarge { .. } => {
                    StatusCode::PAYLOAD_TOO_LARGE
                }
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            Problem::new(status, e.to_string())
        })
    })
    .await?;
    let contract = upload.file_name;
    let is_tos = query.kind.is_terms_of_service(&document.text, false);
    if is_tos && query.format != ReviewFormat::Json {
        return Err(Problem::bad_request(
            "format=csv and format=docx are the checklist of the 41 CUAD clause types of a \
             contract, and this document reads like terms of service (reviewed for unfair \
             terms, in JSON); if it is a contract, add kind=contract",
        ));
    }
    if is_tos {
        let model = crate::lazy::load(&state.tos).await?;
        return run_blocking(&state, move || {
            let format = format.name();
            let review = review_view::tos_review(&model, contract, format, document)
                .map_err(|e| Problem::internal(format!("reviewing the terms of service: {e:#}")))?;
            Ok(Json(review).into_response())
        })
        .await;
    }
    // Loading (or, the very first time, training) the typer can take a minute.
    let typer = crate::lazy::load(&state.reviewer).await?;
    run_blocking(&state, move || {
        let (review, rows) = review_view::typed_review(&typer, &contract, &document.text);
        match query.format {
            ReviewFormat::Csv => return Ok(csv_attachment(&contract, to_csv(&rows))),
            ReviewFormat::Docx => {
                let docx = review_view::report(review, &rows, &document)
                    .map_err(|e| Problem::internal(format!("writing the report: {e}")))?;
                return Ok(attachment(
                    &contract,
                    "review.docx",
                    precedent_engine::docx::DOCX_MEDIA_TYPE,
                    docx,
                ));
            }
            ReviewFormat::Json => {}
        }
        let format = format.name();
        let response = review_view::contract_review(review, rows, contract, format, document);
        Ok(Json(response).into_response())
    })
    .await
}

/// The checklist CSV as a download named after the uploaded contract
/// (`franchise.pdf` → `franchise-checklist.csv`).
fn csv_attachment(contract: &str, csv: String) -> Response {
    attachment(
        contract,
        "checklist.csv",
        "text/csv; charset=utf-8",
        csv.into_bytes(),
    )
}

/// A download named after the uploaded contract (`franchise.pdf`, `review.docx` →
/// `franchise-review.docx`), with only safe characters in the name.
fn attachment(contract: &str, suffix: &str, media_type: &'static str, body: Vec<u8>) -> Response {
    let name = review_view::attachment_name(contract, suffix);
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(media_type)),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}
