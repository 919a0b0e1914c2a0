//! Reviews of many contracts at once: the files a review covers, and the due-diligence table
//! (`review --csv`) with a row per contract and a column per CUAD category.
//!
//! Why here: which files of a folder are contracts, and what a row of the table holds (the
//! contract's metadata, each category's best confidence), are the review's decisions.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use precedent_contracts::meta::ContractMeta;
use precedent_contracts::Format;
use precedent_cuad::CATEGORIES;

use crate::review::ContractReview;

/// The first three party names, full names first ([`ContractMeta::parties`]' order).
pub fn party_list(meta: &ContractMeta) -> String {
    meta.parties
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ")
}

/// The metadata columns of `review --csv`, after the contract's path.
pub const META_COLUMNS: [&str; 4] = ["title", "date", "governing_law", "parties"];

/// The header of `review --csv`: the contract, [`META_COLUMNS`], then [`CATEGORIES`].
pub fn matrix_header() -> impl Iterator<Item = &'static str> {
    std::iter::once("contract")
        .chain(META_COLUMNS)
        .chain(CATEGORIES)
}

/// A row of `review --csv`: the contract and its metadata ([`META_COLUMNS`]), then per CUAD
/// category (in [`CATEGORIES`] order) the confidence of its most confident finding, empty when
/// the category has none.
pub fn matrix_row(review: &ContractReview) -> Vec<String> {
    let mut best = [None::<f32>; CATEGORIES.len()];
    for f in &review.findings {
        if let Some(c) = precedent_cuad::category_index(f.category) {
            best[c] = Some(best[c].map_or(f.confidence, |b: f32| b.max(f.confidence)));
        }
    }
    let meta = review.metadata.clone().unwrap_or_default();
    let parties = party_list(&meta);
    [
        review.contract.clone(),
        meta.title.or(meta.document_type).unwrap_or_default(),
        meta.date.unwrap_or_default(),
        meta.governing_law.unwrap_or_default(),
        parties,
    ]
    .into_iter()
    .chain(
        best.iter()
            .map(|b| b.map(|c| format!("{c:.3}")).unwrap_or_default()),
    )
    .collect()
}

/// The files to review: files as given, folders expanded to the contract files under them.
/// A folder without any contract file is an error, so a mistyped path is not a silent no-op.
pub fn contract_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found: Vec<PathBuf> = walk(path)?
                .into_iter()
                .filter(|f| Format::from_path(f).is_some())
                .collect();
            if found.is_empty() {
                bail!(
                    "{}: no contract files (.txt, .htm/.html, .pdf, .docx) in this folder",
                    path.display()
                );
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Every file under `dir`, sorted, hidden entries skipped; symlinked directories are not
/// followed (no cycles).
pub fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("reading folder {}", d.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading folder {}", d.display()))?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let file_type = entry
                .file_type()
                .with_context(|| format!("inspecting {}", entry.path().display()))?;
            if file_type.is_dir() {
                pending.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{matrix_header, CATEGORIES, META_COLUMNS};

    #[test]
    fn the_header_names_every_column_of_a_row() {
        let header: Vec<&str> = matrix_header().collect();
        assert_eq!(header.len(), 1 + META_COLUMNS.len() + CATEGORIES.len());
        assert_eq!(header[..2], ["contract", "title"]);
    }
}
