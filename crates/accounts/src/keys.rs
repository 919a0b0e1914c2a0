//! API keys: bearer tokens, one library and one role each, stored only as SHA-256 hashes in
//! `LIBRARY/keys.json`.
//!
//! Why hashes: the key file sits next to confidential contracts and gets copied with them; a
//! leaked file must not grant access. Tokens are 256 random bits, so an unsalted fast hash is
//! enough (there is nothing to brute-force). The token is shown once, at creation.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The key file inside a library directory. Library commits only touch `gen-*` and `CURRENT`,
/// so it survives rebuilds and `--add`.
pub const KEYS_FILE: &str = "keys.json";
const TOKEN_PREFIX: &str = "prec_";

/// What a key may do, each role including the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Search, read clauses, find similar clauses, compare, review uploads.
    Read,
    /// Read, plus rate clauses.
    Rate,
    /// Everything, including exporting ratings.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Rate => "rate",
            Role::Admin => "admin",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" => Ok(Role::Read),
            "rate" => Ok(Role::Rate),
            "admin" => Ok(Role::Admin),
            other => Err(format!("unknown role {other:?} (read, rate or admin)")),
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One stored key (never the token itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Short public handle used to list and revoke the key, and recorded with each rating.
    pub id: String,
    pub role: Role,
    /// Who or what the key is for (free text).
    #[serde(default)]
    pub label: String,
    /// Lowercase hex SHA-256 of the token.
    pub sha256: String,
    pub created_unix: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_unix: Option<u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct KeyFile {
    keys: Vec<KeyRecord>,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a valid key file: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("no key with id {0:?} (see `precedent keys list`)")]
    UnknownId(String),
    #[error("the system random number generator failed: {0}")]
    Random(String),
    #[error("{0}")]
    Library(#[from] precedent_library::LibraryError),
    #[error("{}: not a Precedent library (build one with `precedent index`)", .0.display())]
    NotALibrary(PathBuf),
}

/// The keys of one library. Reads go through a cache refreshed when the file changes, so keys
/// created or revoked with the CLI take effect on a running server without a restart.
pub struct KeyStore {
    path: PathBuf,
    cache: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    stamp: Option<(SystemTime, u64)>,
    keys: Vec<KeyRecord>,
}

/// Lowercase hex SHA-256 of a token.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn random_hex(bytes: usize) -> Result<String, KeyError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| KeyError::Random(e.to_string()))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl KeyStore {
    /// The key store of the library in `library_dir` (the file need not exist yet).
    pub fn new(library_dir: &Path) -> Self {
        KeyStore {
            path: library_dir.join(KEYS_FILE),
            cache: Mutex::new(Cached::default()),
        }
    }

    /// The key store of the library in `library_dir`, which must exist.
    ///
    /// Why refuse another folder: keys written beside a mistyped path would be handed out and
    /// never checked by any server.
    pub fn of_library(library_dir: &Path) -> Result<Self, KeyError> {
        if !precedent_library::Library::exists(library_dir) {
            return Err(KeyError::NotALibrary(library_dir.to_path_buf()));
        }
        Ok(KeyStore::new(library_dir))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_file(&self) -> Result<KeyFile, KeyError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| KeyError::Corrupt {
                path: self.path.clone(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(KeyFile::default()),
            Err(source) => Err(KeyError::Io {
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn write_file(&self, file: &KeyFile) -> Result<(), KeyError> {
        let json = serde_json::to_vec_pretty(file).map_err(|e| KeyError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        precedent_library::write_atomically(&self.path, &json)?;
        Ok(())
    }

    /// All keys, revoked ones included.
    pub fn list(&self) -> Result<Vec<KeyRecord>, KeyError> {
        Ok(self.read_file()?.keys)
    }

    /// Creates a key and returns its record and the token, which is not stored anywhere.
    pub fn create(&self, role: Role, label: &str) -> Result<(KeyRecord, String), KeyError> {
        let token = format!("{TOKEN_PREFIX}{}", random_hex(32)?);
        let mut file = self.read_file()?;
        let id = loop {
            let candidate = random_hex(4)?;
            if !file.keys.iter().any(|k| k.id == candidate) {
                break candidate;
            }
        };
        let record = KeyRecord {
            id,
            role,
            label: label.to_owned(),
            sha256: hash_token(&token),
            created_unix: now_unix(),
            revoked_unix: None,
        };
        file.keys.push(record.clone());
        self.write_file(&file)?;
        Ok((record, token))
    }

    /// Revokes the key with `id`; revoking twice is harmless.
    pub fn revoke(&self, id: &str) -> Result<KeyRecord, KeyError> {
        let mut file = self.read_file()?;
        let record = file
            .keys
            .iter_mut()
            .find(|k| k.id == id)
            .ok_or_else(|| KeyError::UnknownId(id.to_owned()))?;
        if record.revoked_unix.is_none() {
            record.revoked_unix = Some(now_unix());
        }
        let revoked = record.clone();
        self.write_file(&file)?;
        Ok(revoked)
    }

    /// The live (not revoked) key whose token hashes to `token_hash`.
    pub fn find(&self, token_hash: &str) -> Result<Option<KeyRecord>, KeyError> {
        let stamp = match std::fs::metadata(&self.path) {
            Ok(m) => Some((m.modified().unwrap_or(UNIX_EPOCH), m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(KeyError::Io {
                    path: self.path.clone(),
                    source,
                })
            }
        };
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.stamp != stamp || stamp.is_none() {
            cache.keys = self.read_file()?.keys;
            cache.stamp = stamp;
        }
        Ok(cache
            .keys
            .iter()
            .find(|k| k.revoked_unix.is_none() && constant_time_eq(&k.sha256, token_hash))
            .cloned())
    }
}

/// The keys as `precedent keys list` prints them: a table of ids, roles, whether each is still
/// accepted, and labels; with no key, how to create one for `library_dir`.
pub fn keys_table(keys: &[KeyRecord], library_dir: &Path) -> String {
    if keys.is_empty() {
        return format!(
            "no keys; create one with `precedent keys create --index {} --role read`\n",
            library_dir.display()
        );
    }
    let mut out = format!("{:<10} {:<6} {:<8} label\n", "id", "role", "status");
    for k in keys {
        let status = if k.revoked_unix.is_some() {
            "revoked"
        } else {
            "active"
        };
        out.push_str(&format!(
            "{:<10} {:<6} {:<8} {}\n",
            k.id,
            k.role.as_str(),
            status,
            k.label
        ));
    }
    out
}

/// Compares two hashes without an early exit, so response timing says nothing about how much
/// of a guessed hash matched.
fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_live_only_beside_a_library() {
        let dir = tempfile::tempdir().expect("tempdir");
        let refused = KeyStore::of_library(dir.path())
            .err()
            .expect("not a library");
        assert!(refused
            .to_string()
            .ends_with("not a Precedent library (build one with `precedent index`)"));
    }

    #[test]
    fn the_table_shows_status_not_tokens() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = KeyStore::new(dir.path());
        let empty = keys_table(&store.list().expect("list"), Path::new("lib"));
        assert_eq!(
            empty,
            "no keys; create one with `precedent keys create --index lib --role read`\n"
        );
        let (alice, token) = store.create(Role::Rate, "alice").expect("create");
        store.create(Role::Read, "bob").expect("create");
        store.revoke(&alice.id).expect("revoke");
        let table = keys_table(&store.list().expect("list"), Path::new("lib"));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("id") && lines[0].ends_with("label"));
        assert!(
            lines[1].contains("revoked") && lines[1].ends_with("alice"),
            "{table}"
        );
        assert!(
            lines[2].contains("active") && lines[2].ends_with("bob"),
            "{table}"
        );
        assert!(!table.contains(&token));
    }

    #[test]
    fn created_keys_are_found_by_token_until_revoked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = KeyStore::new(dir.path());
        let (record, token) = store.create(Role::Rate, "alice").expect("create");
        assert!(token.starts_with(TOKEN_PREFIX) && token.len() == TOKEN_PREFIX.len() + 64);
        let on_disk = std::fs::read_to_string(store.path()).expect("read");
        assert!(
            !on_disk.contains(&token),
            "the token itself is never stored"
        );
        assert!(on_disk.contains(&hash_token(&token)));
        let found = store.find(&hash_token(&token)).expect("find");
        assert_eq!(found.as_ref().map(|k| k.role), Some(Role::Rate));
        assert_eq!(store.find(&hash_token("prec_wrong")).expect("find"), None);
        store.revoke(&record.id).expect("revoke");
        assert_eq!(store.find(&hash_token(&token)).expect("find"), None);
        assert!(matches!(store.revoke("nope"), Err(KeyError::UnknownId(_))));
        assert_eq!(store.list().expect("list").len(), 1);
    }

    #[test]
    fn a_corrupt_key_file_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(KEYS_FILE), "{not json").expect("write");
        let err = KeyStore::new(dir.path()).list().expect_err("corrupt");
        assert!(err.to_string().contains(KEYS_FILE), "{err}");
    }

    #[test]
    fn roles_are_ordered_and_parsed() {
        assert!(Role::Read < Role::Rate && Role::Rate < Role::Admin);
        assert_eq!("ADMIN".parse::<Role>(), Ok(Role::Admin));
        assert!("owner".parse::<Role>().is_err());
    }
}
