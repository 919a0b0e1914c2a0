//! Who is calling and what they may do: a bearer key belongs to exactly one library (the one
//! whose `keys.json` holds its hash) with one role. No key or an unknown key is 401; a key used
//! on another library or beyond its role is 403.

use std::sync::Arc;

use axum::http::{header, HeaderMap};

use crate::keys::{hash_token, KeyRecord, Role};
use crate::problem::Problem;
use crate::state::LibraryService;
use crate::AppState;

/// An authorized caller and the library the request is about.
pub struct Caller {
    pub service: Arc<LibraryService>,
    pub key: KeyRecord,
}

const HOW_TO_GET_A_KEY: &str =
    "create one with `precedent keys create --index LIBRARY --role read` and send it as `Authorization: Bearer KEY`";

/// Checks the request's key against every served library and the role `need` on `library`
/// (default: the key's own library).
pub fn authorize(
    state: &AppState,
    headers: &HeaderMap,
    library: Option<&str>,
    need: Role,
) -> Result<Caller, Problem> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(Problem::unauthorized(format!(
            "this API needs a key: {HOW_TO_GET_A_KEY}"
        )));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            Problem::unauthorized(format!(
                "the Authorization header must be `Bearer KEY`; {HOW_TO_GET_A_KEY}"
            ))
        })?;
    let hash = hash_token(token);
    let mut owner = None;
    for slot in state.libraries.iter() {
        let service = slot.get();
        match service.keys.find(&hash) {
            Ok(Some(key)) => {
                owner = Some((service, key));
                break;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!("{e}");
                return Err(Problem::internal(format!(
                    "the key store of library {:?} is unreadable",
                    service.name
                )));
            }
        }
    }
    let Some((home, key)) = owner else {
        return Err(Problem::unauthorized(format!(
            "unknown or revoked key; {HOW_TO_GET_A_KEY}"
        )));
    };
    let service = match library {
        None => home,
        Some(name) => {
            let Some(target) = state.libraries.iter().find(|s| s.name() == name) else {
                return Err(Problem::not_found(format!(
                    "no library named {name:?} is served here"
                )));
            };
            if target.name() != home.name {
                return Err(Problem::forbidden(format!(
                    "this key is for library {:?}, not {name:?}",
                    home.name
                )));
            }
            target.get()
        }
    };
    if key.role < need {
        return Err(Problem::forbidden(format!(
            "this key has role {}; this request needs role {need} or higher",
            key.role
        )));
    }
    Ok(Caller { service, key })
}
