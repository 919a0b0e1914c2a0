//! A disk cache of judgements, so re-running an evaluation (or a search the judge has seen)
//! costs no model call and no money.
//!
//! One append-only JSON-lines file per directory, loaded into memory when opened. Appending
//! keeps a crash from losing earlier answers; a torn last line (a crash mid-write) is skipped
//! with a warning, never an error. Keys are SHA-256 over everything that can change an answer:
//! backend, model, prompt version, mode, the query, and hashes of the clause texts.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::JudgeError;

const FILE_NAME: &str = "judgements.jsonl";

/// A cached answer: stars (pointwise) or the probability that the first clause is better
/// (pairwise), with what the model said and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedAnswer {
    pub key: String,
    pub score: f32,
    pub raw: String,
    pub tokens_in: u32,
    pub tokens_out: u32,
}

pub struct JudgementCache {
    path: PathBuf,
    entries: Mutex<HashMap<String, CachedAnswer>>,
    file: Mutex<File>,
}

impl JudgementCache {
    /// Opens (creating) the cache in `dir`.
    pub fn open(dir: &Path) -> Result<Self, JudgeError> {
        let path = dir.join(FILE_NAME);
        let err = |e: std::io::Error| JudgeError::Cache {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(err)?;
        let mut entries = HashMap::new();
        if path.exists() {
            let reader = BufReader::new(File::open(&path).map_err(err)?);
            for (n, line) in reader.lines().enumerate() {
                let line = line.map_err(err)?;
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<CachedAnswer>(&line) {
                    Ok(answer) => {
                        entries.insert(answer.key.clone(), answer);
                    }
                    Err(e) => tracing::warn!(
                        "{}:{}: skipping unreadable cached judgement ({e})",
                        path.display(),
                        n + 1
                    ),
                }
            }
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(err)?;
        // A torn last line must not swallow the next answer appended after it.
        if file.metadata().map_err(err)?.len() > 0 && !ends_with_newline(&path) {
            file.write_all(b"\n").map_err(err)?;
        }
        Ok(JudgementCache {
            path,
            entries: Mutex::new(entries),
            file: Mutex::new(file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, key: &str) -> Option<CachedAnswer> {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    /// Records an answer (in memory and appended to the file).
    pub fn put(&self, answer: CachedAnswer) -> Result<(), JudgeError> {
        let mut line = serde_json::to_string(&answer).map_err(|e| JudgeError::Cache {
            path: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        line.push('\n');
        {
            let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
            file.write_all(line.as_bytes())
                .map_err(|e| JudgeError::Cache {
                    path: self.path.display().to_string(),
                    message: e.to_string(),
                })?;
        }
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(answer.key.clone(), answer);
        Ok(())
    }
}

fn ends_with_newline(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = File::open(path) else {
        return true;
    };
    let mut last = [0u8; 1];
    f.seek(SeekFrom::End(-1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] == b'\n'
}

/// The cache key of one judgement. `texts` are the clause texts (one for pointwise, two in
/// order for pairwise); they are hashed so the key stays short.
pub fn cache_key(backend: &str, model: &str, mode: &str, query: &str, texts: &[&str]) -> String {
    let mut h = Sha256::new();
    for part in [backend, model, crate::prompt::PROMPT_VERSION, mode, query] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    for text in texts {
        h.update(Sha256::digest(text.as_bytes()));
    }
    format!("{:x}", h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(key: &str, score: f32) -> CachedAnswer {
        CachedAnswer {
            key: key.into(),
            score,
            raw: "4".into(),
            tokens_in: 120,
            tokens_out: 1,
        }
    }

    #[test]
    fn answers_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let cache = JudgementCache::open(dir.path()).unwrap();
        assert!(cache.is_empty());
        cache.put(answer("k1", 4.0)).unwrap();
        cache.put(answer("k2", 2.5)).unwrap();
        drop(cache);
        let cache = JudgementCache::open(dir.path()).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("k2"), Some(answer("k2", 2.5)));
        assert_eq!(cache.get("k3"), None);
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_later_answers_still_land() {
        let dir = tempfile::tempdir().unwrap();
        let cache = JudgementCache::open(dir.path()).unwrap();
        cache.put(answer("k1", 4.0)).unwrap();
        drop(cache);
        let path = dir.path().join(FILE_NAME);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"key\":\"torn\",\"sco").unwrap();
        drop(f);
        let cache = JudgementCache::open(dir.path()).unwrap();
        assert_eq!(cache.len(), 1);
        cache.put(answer("k2", 3.0)).unwrap();
        drop(cache);
        let cache = JudgementCache::open(dir.path()).unwrap();
        assert_eq!(cache.len(), 2);
        assert!(cache.get("k2").is_some());
    }

    #[test]
    fn keys_change_with_every_input() {
        let base = cache_key("openai", "m", "pointwise", "q", &["c"]);
        assert_eq!(base, cache_key("openai", "m", "pointwise", "q", &["c"]));
        for other in [
            cache_key("gguf", "m", "pointwise", "q", &["c"]),
            cache_key("openai", "m2", "pointwise", "q", &["c"]),
            cache_key("openai", "m", "pairwise", "q", &["c"]),
            cache_key("openai", "m", "pointwise", "q2", &["c"]),
            cache_key("openai", "m", "pointwise", "q", &["c2"]),
            cache_key("openai", "m", "pointwise", "q", &["c", "d"]),
        ] {
            assert_ne!(base, other);
        }
        assert_ne!(
            cache_key("o", "m", "pairwise", "q", &["a", "b"]),
            cache_key("o", "m", "pairwise", "q", &["b", "a"])
        );
    }
}
