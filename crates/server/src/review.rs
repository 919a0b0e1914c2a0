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
use precedent_engine::review::{
    checklist, checklist_rows, review_text, to_csv, ChecklistRow, PRESENT_AT, SPANS_PER_CATEGORY,
};
use precedent_unfair::document::{looks_like_terms_of_service, TosReview};
use precedent_unfair::UnfairModel;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::api::run_blocking;
use crate::auth::authorize;
use crate::keys::Role;
use crate::lazy::{LazyModel, Loader};
use crate::problem::Problem;
use crate::AppState;

/// A clause type found in a contract.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Finding {
    /// CUAD category, e.g. "Governing Law".
    pub category: String,
    pub confidence: f32,
    /// Character span in the contract text of the review.
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// Number of the segmented clause the finding starts in, e.g. "9.1".
    pub section: Option<String>,
}

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

/// What the uploaded document is reviewed as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReviewKind {
    /// Terms of service when the text reads like them (names itself so, addresses "you"),
    /// else a contract.
    #[default]
    Auto,
    /// CUAD clause types.
    Contract,
    /// Potentially unfair terms of service (UNFAIR-ToS), per sentence.
    Tos,
}

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

/// A segmented clause of the reviewed contract.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SectionView {
    pub number: Option<String>,
    pub heading: Option<String>,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReviewResponse {
    /// The uploaded file's name.
    pub contract: String,
    /// What the contract says about itself (title, document type, parties, date, governing
    /// law), read by pattern; a field not found is null.
    pub metadata: precedent_contracts::meta::ContractMeta,
    /// txt, html, pdf or docx.
    pub format: String,
    /// The text was recognised by OCR (a PDF without a text layer): it may differ from the scan.
    pub ocr: bool,
    /// The contract's text as read; finding and section spans are char offsets into it.
    pub text: String,
    pub sections: Vec<SectionView>,
    /// Clause types found, most confident first; at most 3 non-overlapping spans per type,
    /// confidence 0.5 and up. For terms of service: one finding per flagged sentence and
    /// unfair-term type (category = the type's name), in document order.
    pub findings: Vec<Finding>,
    /// Contracts only: all 41 CUAD categories in `master_clauses.csv` order, each
    /// {"category", "present", "band" (likely >= 0.5, possible >= 0.3, else unlikely),
    /// "best_confidence" (null without a candidate), "spans": [{"start", "end", "section",
    /// "confidence", "text"}]}, spans best first, no repeats; an absent category has none.
    /// Empty for terms of service (see `unfair_terms.checklist`).
    #[schema(value_type = Vec<Object>)]
    pub checklist: Vec<ChecklistRow>,
    /// "contract" or "tos": which review was made.
    pub kind: &'static str,
    /// Terms of service only: {"sentences", "flagged": [{"sentence", "start", "end", "text",
    /// "types": [{"id", "name", "confidence"}]}], "checklist": [{"id", "name", "present",
    /// "sentences", "best_confidence"}]} (all eight types, present or absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub unfair_terms: Option<TosReview>,
}

/// Findings below this confidence are not shown; a category is present in the checklist from
/// the same confidence.
const MIN_CONFIDENCE: f32 = PRESENT_AT;
/// Candidates per category the typer proposes, from which the checklist keeps the confident,
/// non-overlapping ones.
const CANDIDATES_PER_CATEGORY: usize = 20;

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
    let is_tos = match query.kind {
        ReviewKind::Tos => true,
        ReviewKind::Contract => false,
        ReviewKind::Auto => looks_like_terms_of_service(&document.text),
    };
    if is_tos && query.format != ReviewFormat::Json {
        return Err(Problem::bad_request(
            "format=csv and format=docx are the checklist of the 41 CUAD clause types of a \
             contract, and this document reads like terms of service (reviewed for unfair \
             terms, in JSON); if it is a contract, add kind=contract",
        ));
    }
    if is_tos {
        let model = state.tos.load().await?;
        return run_blocking(&state, move || {
            let review = precedent_unfair::document::review(&model, &document.text)
                .map_err(|e| Problem::internal(format!("reviewing the terms of service: {e:#}")))?;
            let findings = review
                .flagged
                .iter()
                .flat_map(|f| {
                    f.types.iter().map(|t| Finding {
                        category: t.name.to_owned(),
                        confidence: t.confidence,
                        start: f.start,
                        end: f.end,
                        text: f.text.clone(),
                        section: None,
                    })
                })
                .collect();
            Ok(Json(ReviewResponse {
                contract,
                metadata: precedent_contracts::meta::extract(&document.text),
                format: format.name().to_owned(),
                ocr: document.ocr,
                sections: Vec::new(),
                text: document.text,
                findings,
                checklist: Vec::new(),
                kind: "tos",
                unfair_terms: Some(review),
            })
            .into_response())
        })
        .await;
    }
    // Loading (or, the very first time, training) the typer can take a minute.
    let typer = state.reviewer.load().await?;
    run_blocking(&state, move || {
        let clauses = precedent_contracts::segment(&document);
        let mut review = review_text(&typer, &contract, &document.text, CANDIDATES_PER_CATEGORY);
        let rows = checklist_rows(&review);
        match query.format {
            ReviewFormat::Csv => return Ok(csv_attachment(&contract, to_csv(&rows))),
            ReviewFormat::Docx => {
                review.metadata = Some(precedent_contracts::meta::extract(&document.text));
                review.ocr = document.ocr;
                let docx = precedent_engine::review::report_docx(&review, &rows)
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
        let mut findings: Vec<Finding> =
            checklist(review.findings, MIN_CONFIDENCE, SPANS_PER_CATEGORY)
                .into_iter()
                .map(|f| Finding {
                    category: f.category.to_owned(),
                    confidence: f.confidence,
                    start: f.start,
                    end: f.end,
                    text: f.text,
                    section: f.section,
                })
                .collect();
        for f in &mut findings {
            if f.section.is_none() {
                f.section = clauses
                    .iter()
                    .filter(|c| c.start <= f.start && f.start < c.end)
                    .min_by_key(|c| c.end - c.start)
                    .and_then(|c| {
                        precedent_contracts::library_docs::section_reference(
                            &c.path,
                            c.number.as_deref(),
                        )
                    });
            }
        }
        Ok(Json(ReviewResponse {
            contract,
            metadata: precedent_contracts::meta::extract(&document.text),
            format: format.name().to_owned(),
            ocr: document.ocr,
            sections: clauses
                .iter()
                .map(|c| SectionView {
                    number: c.number.clone(),
                    heading: c.heading.clone(),
                    start: c.start,
                    end: c.end,
                })
                .collect(),
            text: document.text,
            findings,
            checklist: rows,
            kind: "contract",
            unfair_terms: None,
        })
        .into_response())
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
    let stem = std::path::Path::new(contract)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = if safe.is_empty() {
        "contract".to_owned()
    } else {
        safe
    };
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{name}-{suffix}\""))
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
