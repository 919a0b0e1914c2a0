//! The web page: plain HTML, CSS and JavaScript compiled into the binary (no build step, no
//! CDN), talking to the same /v1 API with the key the user types in.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::AppState;

const INDEX_HTML: &str = include_str!("../web/index.html");
const APP_JS: &str = include_str!("../web/app.js");
const STYLE_CSS: &str = include_str!("../web/style.css");

/// Scripts and styles only from this server; nothing inline, no frames, no third parties.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
}

#[cfg(test)]
mod tests {
    use super::APP_JS;

    /// The page offers as clause-type filters exactly the CUAD types a search filters on, named
    /// as the server names them.
    #[test]
    fn the_pages_clause_types_are_the_servers() {
        let start = APP_JS
            .find("const CUAD_TYPES = [")
            .expect("CUAD_TYPES in app.js");
        let end = start + APP_JS[start..].find("];").expect("end of CUAD_TYPES");
        let page: Vec<&str> = APP_JS[start..end].split('"').skip(1).step_by(2).collect();
        let mut server: Vec<&str> = precedent_cuad::CATEGORIES
            .iter()
            .copied()
            .filter(|c| precedent_cuad::is_clause_type(c))
            .collect();
        server.sort_unstable();
        let mut sorted = page.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, server);
    }
}
