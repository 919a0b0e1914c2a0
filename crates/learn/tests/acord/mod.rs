//! ACORD's files as the rule tests read them (`../shared/data/acord`, beside the checkout).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The shared data folder (`../shared/data` from the checkout).
pub fn shared() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).to_path_buf()
}

/// A BEIR jsonl file (corpus or queries) as `_id` -> the string field `value`.
pub fn jsonl(path: &Path, value: &str) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).expect("ACORD jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("jsonl line");
            (
                v["_id"].as_str().expect("_id").to_owned(),
                v[value].as_str().expect("field").to_owned(),
            )
        })
        .collect()
}
