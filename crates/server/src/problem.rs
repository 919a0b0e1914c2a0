//! Errors as RFC 9457 problem details (`application/problem+json`), so every client, the web page
//! included, reads one shape: a short `title` per kind of failure and a `detail` that says what to
//! do about this one.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// A problem-details error body.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem; `about:blank` plus `title` when no more specific kind.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// Values the client may have meant (an extension member): the CUAD names of a clause-type
    /// alias such as "Limitation of Liability". Absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
    /// Seconds after which the client may try again (sent as `Retry-After`), for a server that
    /// is busy rather than broken.
    #[serde(skip)]
    pub retry_after: Option<u32>,
}

impl Problem {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Problem {
            kind: "about:blank".into(),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail: detail.into(),
            suggestions: Vec::new(),
            retry_after: None,
        }
    }

    /// 503 with `Retry-After`: the server refuses this work now rather than queue it.
    pub fn busy(detail: impl Into<String>, retry_after_secs: u32) -> Self {
        let mut problem = Problem::new(StatusCode::SERVICE_UNAVAILABLE, detail);
        problem.retry_after = Some(retry_after_secs);
        problem
    }

    /// The problem with values to suggest instead ([`Problem::suggestions`]).
    pub fn with_suggestions(mut self, suggestions: Vec<&str>) -> Self {
        self.suggestions = suggestions.into_iter().map(str::to_owned).collect();
        self
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::BAD_REQUEST, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, detail)
    }

    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::UNAUTHORIZED, detail)
    }

    pub fn forbidden(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::FORBIDDEN, detail)
    }

    pub fn not_implemented(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_IMPLEMENTED, detail)
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, detail)
    }

    pub fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.title, self.detail)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let body = serde_json::to_vec(&self).unwrap_or_else(|_| b"{}".to_vec());
        let mut response = (status, body).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"precedent\""),
            );
        }
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// Turns the plain-text rejections of axum's extractors and tower-http's layers (bad JSON, body
/// too large, wrong content type, unknown route) into problem details, keeping their status.
pub async fn problem_for_plain_errors(response: Response) -> Response {
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).trim().to_owned();
    let detail = if text.is_empty() {
        match status {
            StatusCode::NOT_FOUND => {
                "no such endpoint; the API is described at /openapi.json".to_owned()
            }
            StatusCode::PAYLOAD_TOO_LARGE => {
                "the request body is larger than the server accepts".to_owned()
            }
            StatusCode::METHOD_NOT_ALLOWED => {
                "this endpoint does not accept that HTTP method".to_owned()
            }
            _ => status.canonical_reason().unwrap_or("error").to_owned(),
        }
    } else {
        text
    };
    let mut response = Problem::new(status, detail).into_response();
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            response.headers_mut().insert(name.clone(), value.clone());
        }
    }
    response
}
