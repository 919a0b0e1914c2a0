//! LegalBench's CUAD tasks: folders `CUAD_<Category>/` with `train.tsv` / `test.tsv` (columns
//! `label` Yes/No and `text`), scored by balanced accuracy. Reading them is here; the decision
//! thresholds are in `precedent_clause_types::legalbench`, their tuning in `precedent_eval`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::categories::{category_index, CATEGORIES};

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

#[cfg(test)]
mod tests {
    use super::*;

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
