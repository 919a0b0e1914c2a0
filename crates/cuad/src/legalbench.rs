//! LegalBench's CUAD tasks: folders `CUAD_<Category>/` with `train.tsv` / `test.tsv` (columns
//! `label` Yes/No and `text`), scored by balanced accuracy. The typer answers "is this clause of
//! category X?" with its confidence for X against a per-category threshold tuned on a development
//! set built from the shared contracts' annotations (held-out folds only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use precedent_metrics::balanced_accuracy;

use crate::categories::{category_index, CATEGORIES};
use crate::eval::HeldOutClause;

/// CUAD categories LegalBench has no task for (they are not yes/no questions about a clause).
const NOT_TASKS: [&str; 3] = ["Document Name", "Parties", "Agreement Date"];

/// Whether LegalBench has a `CUAD_<Category>` task for category `k` (38 of the 41 do).
pub fn is_task_category(k: usize) -> bool {
    CATEGORIES.get(k).is_some_and(|c| !NOT_TASKS.contains(c))
}

/// One labelled example of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub label: bool,
    pub text: String,
}

/// A task folder and the CUAD category it asks about.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub dir: PathBuf,
    pub category: usize,
}

/// The `CUAD_*` task folders of `dir`, sorted by name. Folders whose category is unknown are an
/// error naming the folder (a typo would otherwise silently drop a task).
pub fn tasks(dir: &Path) -> Result<Vec<Task>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let Some(category_name) = name.strip_prefix("CUAD_") else {
            continue;
        };
        if !path.is_dir() {
            continue;
        }
        let category = category_index(category_name).with_context(|| {
            format!(
                "{}: no CUAD category named {category_name:?}",
                path.display()
            )
        })?;
        out.push(Task {
            name,
            dir: path,
            category,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    if out.is_empty() {
        bail!("{}: no CUAD_<Category> task folders", dir.display());
    }
    Ok(out)
}

/// Reads a LegalBench TSV (header with `label` and `text` columns; CSV quoting).
pub fn read_examples(path: &Path) -> Result<Vec<Example>> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(b'\t')
        .has_headers(true)
        .from_path(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let headers = reader
        .headers()
        .with_context(|| format!("{}:1: bad header", path.display()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim() == name)
            .with_context(|| format!("{}:1: no {name:?} column", path.display()))
    };
    let (label_col, text_col) = (column("label")?, column("text")?);
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.with_context(|| format!("reading {}", path.display()))?;
        let line = record.position().map_or(0, |p| p.line());
        let label = match record.get(label_col).map(str::trim) {
            Some(l) if l.eq_ignore_ascii_case("yes") => true,
            Some(l) if l.eq_ignore_ascii_case("no") => false,
            other => bail!(
                "{}:{line}: label {other:?} is not Yes or No",
                path.display()
            ),
        };
        let text = record.get(text_col).unwrap_or_default().to_owned();
        out.push(Example { label, text });
    }
    Ok(out)
}

/// Per-category decision thresholds on the typer's confidence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Thresholds {
    pub thresholds: BTreeMap<String, f32>,
}

impl Thresholds {
    pub fn get(&self, category: usize) -> f32 {
        self.thresholds
            .get(CATEGORIES[category])
            .copied()
            .unwrap_or(0.5)
    }
}

/// Thresholds tuned on the CUAD development set by `precedent eval-cuad --json-out` (its
/// `legalbench_dev.thresholds`), shipped so that LegalBench runs need no development pass.
pub fn shipped_thresholds() -> Thresholds {
    serde_json::from_str(include_str!("../../../models/legalbench/thresholds.json")).unwrap_or(
        Thresholds {
            thresholds: BTreeMap::new(),
        },
    )
}

/// The development set of category `k`: held-out annotations of `k` are positives, held-out
/// annotations of other categories negatives (as LegalBench built its CUAD tasks); a clause
/// annotated under several categories only counts as a positive.
fn dev_pairs<'a>(
    clauses: &'a [HeldOutClause],
    k: usize,
    keep: impl Fn(&HeldOutClause) -> bool + 'a,
) -> impl Iterator<Item = (bool, f32)> + 'a {
    clauses
        .iter()
        .filter(move |c| keep(c))
        .map(move |c| (c.category == k, c.scores[k]))
}

/// The threshold maximising balanced accuracy on `pairs` (midpoint between neighbouring scores).
pub fn best_threshold(pairs: &[(bool, f32)]) -> f32 {
    let mut scores: Vec<f32> = pairs.iter().map(|p| p.1).collect();
    scores.sort_by(f32::total_cmp);
    scores.dedup();
    let mut best = (f64::MIN, 0.5f32);
    for w in scores.windows(2) {
        let t = (w[0] + w[1]) / 2.0;
        let ba = balanced_accuracy(pairs.iter().map(|&(g, s)| (g, s >= t))).unwrap_or(0.0);
        if ba > best.0 {
            best = (ba, t);
        }
    }
    best.1
}

/// Development results: per category, balanced accuracy with the threshold tuned on the other
/// half of the contracts (even/odd split, both ways), and the thresholds tuned on all of them.
#[derive(Debug, Clone, Serialize)]
pub struct DevReport {
    pub tasks: BTreeMap<String, f64>,
    pub mean: f64,
    pub positives: BTreeMap<String, usize>,
    pub thresholds: Thresholds,
}

pub fn tune_on_dev(clauses: &[HeldOutClause]) -> DevReport {
    let mut tasks = BTreeMap::new();
    let mut positives = BTreeMap::new();
    let mut thresholds = BTreeMap::new();
    for (k, category) in CATEGORIES.iter().enumerate() {
        let all: Vec<(bool, f32)> = dev_pairs(clauses, k, |_| true).collect();
        let n_pos = all.iter().filter(|p| p.0).count();
        if n_pos == 0 {
            continue;
        }
        let mut judged = Vec::new();
        for half in 0..2 {
            let tune: Vec<_> = dev_pairs(clauses, k, |c| c.contract % 2 != half).collect();
            let t = best_threshold(&tune);
            judged.extend(
                dev_pairs(clauses, k, |c| c.contract % 2 == half).map(|(g, s)| (g, s >= t)),
            );
        }
        let name = (*category).to_owned();
        tasks.insert(name.clone(), balanced_accuracy(judged).unwrap_or(0.0));
        positives.insert(name.clone(), n_pos);
        thresholds.insert(name, best_threshold(&all));
    }
    let mean = tasks.values().sum::<f64>() / tasks.len().max(1) as f64;
    DevReport {
        tasks,
        mean,
        positives,
        thresholds: Thresholds { thresholds },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_separates_classes() {
        let pairs = [
            (true, 0.9),
            (true, 0.7),
            (false, 0.4),
            (false, 0.1),
            (true, 0.35),
        ];
        // Between 0.4 and 0.7: TPR 2/3, TNR 1 (0.83) beats catching the 0.35 positive (0.75).
        let t = best_threshold(&pairs);
        assert!((t - 0.55).abs() < 1e-6, "{t}");
    }

    #[test]
    fn reads_shared_task_folders() {
        let dir = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/legalbench"
        ));
        let tasks = tasks(dir).unwrap();
        assert_eq!(tasks.len(), 38);
        let task_categories: Vec<usize> = tasks.iter().map(|t| t.category).collect();
        for k in 0..CATEGORIES.len() {
            assert_eq!(is_task_category(k), task_categories.contains(&k), "{k}");
        }
        let audit = tasks
            .iter()
            .find(|t| t.name == "CUAD_Audit Rights")
            .unwrap();
        assert_eq!(CATEGORIES[audit.category], "Audit Rights");
        let rows = read_examples(&audit.dir.join("train.tsv")).unwrap();
        assert_eq!(rows.len(), 6);
        assert!(rows[0].label && !rows[2].label);
    }

    #[test]
    fn bad_label_names_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.tsv");
        std::fs::write(&p, "label\ttext\nYes\tok\nMaybe\tbad\n").unwrap();
        let err = read_examples(&p).unwrap_err().to_string();
        assert!(err.contains(":3:") && err.contains("Maybe"), "{err}");
    }
}
