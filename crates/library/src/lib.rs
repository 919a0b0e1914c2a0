//! The clause library on disk: BM25 index, clause store and (optionally) clause vectors,
//! committed together as one *generation*.
//!
//! ```text
//! LIBRARY/
//!   CURRENT            "gen-000004": the generation readers open
//!   gen-000004/
//!     manifest.json    format version, analyzer, clause count, vector model
//!     lexical/         tantivy index (rows in a fast field)
//!     clauses.jsonl    clause store + ids.jsonl + clauses.offsets
//!     vectors/         clause embeddings (when built with a model)
//! ```
//!
//! Why generations: an index is several files that must agree (row numbers in tantivy, in the
//! clause store and in the vector store). A build or an incremental add writes a complete new
//! generation beside the current one and only then replaces `CURRENT` with an atomic rename, so a
//! crash at any point leaves the previous library usable. Tantivy segments are immutable, so an
//! add hard-links them into the new generation instead of copying. Writers take `LOCK` (see
//! [`WriteLock`]): one writer at a time, and a commit on a stale view of the library is refused.
//!
//! This crate knows nothing of models or HTTP: vectors arrive already computed.

mod duplicates;
mod filter;
mod lexical;
mod lock;
mod store;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use precedent_formats::CorpusDoc;
use precedent_text::spelling::LibraryWords;
use precedent_text::AnalyzerConfig;
use serde::{Deserialize, Serialize};

pub use duplicates::{duplicate_key, fetch_for_folding, CopyFolder, Placement};
pub use filter::{BadDate, BadFilter, Filter};
pub use lexical::LexicalIndex;
pub use lock::WriteLock;
pub use precedent_vectors::{IndexKind, Neighbor, VectorError, VectorIndex};
pub use store::ClauseStore;

/// Version of the on-disk layout; bumped on incompatible changes so old libraries are refused
/// with a clear message rather than misread.
pub const FORMAT_VERSION: u32 = 1;
const CURRENT_FILE: &str = "CURRENT";
const MANIFEST_FILE: &str = "manifest.json";
/// The generation's words and their clause counts, one `word<TAB>count` line each: what query
/// spelling is checked against ([`Library::words`]), written with the generation so that a large
/// library never reads every clause to answer a misspelt query.
const WORDS_FILE: &str = "words.tsv";
const LEXICAL_DIR: &str = "lexical";
const VECTORS_DIR: &str = "vectors";

#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a Precedent library (no CURRENT file); build one with `precedent index`")]
    NotALibrary { path: PathBuf },
    #[error("{path}: library is corrupt: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("{path}: library format {found} is not supported (this build reads {FORMAT_VERSION}); rebuild it with `precedent index`")]
    Version { path: PathBuf, found: u32 },
    #[error("clause id {0:?} is already in the library")]
    DuplicateId(String),
    #[error("clause id {0:?} is empty")]
    EmptyId(String),
    #[error("no clause at row {0}")]
    NoSuchRow(u32),
    #[error("lexical index: {0}")]
    Lexical(String),
    #[error("{path}: {message}")]
    Json { path: PathBuf, message: String },
    #[error("vectors: {0}")]
    Vectors(#[from] VectorError),
    #[error("{0}")]
    VectorMismatch(String),
    #[error("{path}: another process is writing this library (its LOCK is held); wait for it to finish, then run again")]
    Locked { path: PathBuf },
    #[error("{path}: the library changed since it was opened (now {current}, opened at {opened}): another writer committed; reopen it and run again")]
    Changed {
        path: PathBuf,
        opened: String,
        current: String,
    },
}

impl LibraryError {
    fn json(path: &Path) -> impl Fn(serde_json::Error) -> LibraryError + '_ {
        move |e| LibraryError::Json {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> LibraryError + '_ {
    move |e| LibraryError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

/// What a generation contains; written last, so its presence means the generation is complete.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format_version: u32,
    pub generation: u64,
    pub created_unix: u64,
    pub clauses: usize,
    pub analyzer: AnalyzerConfig,
    /// Caller-defined fingerprint of the source the library was built from (e.g. a hash of the
    /// corpus file), so tools can tell whether an existing library can be reused.
    #[serde(default)]
    pub source_fingerprint: Option<String>,
    /// The clause vectors of this generation, if it has any.
    #[serde(default)]
    pub vectors: Option<VectorsInfo>,
}

/// Which model embedded the clauses, and how they are indexed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VectorsInfo {
    /// The embedder's identity (name + weights hash): queries must be embedded by the same model.
    pub model_id: String,
    /// How to load that model again (a path, a short name or a hub id), for queries.
    #[serde(default)]
    pub model_source: String,
    pub dim: usize,
    pub kind: IndexKind,
    /// How clauses longer than the model's window were embedded (e.g. `trunc`, `chunkmean32`).
    pub long_text: String,
}

/// Clause embeddings handed to [`Library::build`] / [`Library::add`], row-major, one per clause
/// in input order.
pub struct ClauseVectors {
    pub info: VectorsInfo,
    pub data: Vec<f32>,
}

/// Options for building a library.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    pub analyzer: AnalyzerConfig,
    pub source_fingerprint: Option<String>,
}

fn check_vector_count(vectors: &ClauseVectors, clauses: usize) -> Result<(), LibraryError> {
    let expected = clauses * vectors.info.dim;
    if vectors.info.dim == 0 || vectors.data.len() != expected {
        return Err(LibraryError::VectorMismatch(format!(
            "{} vector values for {clauses} clauses of dimension {}",
            vectors.data.len(),
            vectors.info.dim
        )));
    }
    Ok(())
}

/// Progress callbacks for long work (the CLI turns them into progress bars).
pub trait Progress: Sync {
    fn start(&self, _stage: &str, _total: u64) {}
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
}

/// A progress sink that ignores everything.
pub struct NoProgress;
impl Progress for NoProgress {}

/// An opened library generation.
pub struct Library {
    root: PathBuf,
    generation_dir: PathBuf,
    manifest: Manifest,
    lexical: LexicalIndex,
    store: ClauseStore,
    /// Loaded on first use: a BM25-only query on a million-clause library should not pay
    /// seconds and gigabytes to read vectors it never touches.
    vectors: std::sync::OnceLock<Result<Option<Box<dyn VectorIndex>>, String>>,
    /// Counted on first use, like the vectors: only a query with a word nothing else knows
    /// needs them ([`Library::words`]).
    words: std::sync::OnceLock<Result<LibraryWords, String>>,
}

fn generation_name(generation: u64) -> String {
    format!("gen-{generation:06}")
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn check_new_ids<'a>(
    docs: &'a [CorpusDoc],
    existing: Option<&ClauseStore>,
) -> Result<(), LibraryError> {
    let mut seen = std::collections::HashSet::<&'a str>::new();
    for doc in docs {
        if doc.id.trim().is_empty() {
            return Err(LibraryError::EmptyId(doc.id.clone()));
        }
        if !seen.insert(&doc.id) || existing.is_some_and(|s| s.row(&doc.id).is_some()) {
            return Err(LibraryError::DuplicateId(doc.id.clone()));
        }
    }
    Ok(())
}

/// The text BM25 indexes for a clause: title (when there is one) and body.
pub fn indexed_text(doc: &CorpusDoc) -> String {
    match doc.title.as_deref().filter(|t| !t.trim().is_empty()) {
        Some(title) => format!("{title}\n{}", doc.text),
        None => doc.text.clone(),
    }
}

impl Library {
    /// Returns true if `root` holds a library.
    pub fn exists(root: &Path) -> bool {
        root.join(CURRENT_FILE).is_file()
    }

    /// Takes the library's write lock for as long as the returned guard lives, failing at once
    /// with [`LibraryError::Locked`] if another process writes it. [`Library::build`] and
    /// [`Library::add`] take it themselves for each commit; a writer that commits many times
    /// (ingest, batch after batch) takes it up front so that a second writer is refused before
    /// either has done any work.
    pub fn lock(root: &Path) -> Result<WriteLock, LibraryError> {
        WriteLock::acquire(root)
    }

    /// As [`Library::lock`], but waits until another process releases the lock: for caches that
    /// several processes may build at once, where the loser should reuse the winner's library.
    pub fn lock_waiting(root: &Path) -> Result<WriteLock, LibraryError> {
        WriteLock::acquire_waiting(root)
    }

    /// Builds a library from `docs` in `root`. If `root` already holds a library, the new one
    /// replaces it atomically (readers of the old one keep working until they reopen).
    pub fn build(
        root: &Path,
        docs: &[CorpusDoc],
        options: &BuildOptions,
        vectors: Option<ClauseVectors>,
        progress: &dyn Progress,
    ) -> Result<Library, LibraryError> {
        check_new_ids(docs, None)?;
        if let Some(v) = &vectors {
            check_vector_count(v, docs.len())?;
        }
        let _lock = WriteLock::acquire(root)?;
        let generation = Self::next_generation(root)?;
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            generation,
            created_unix: now_unix(),
            clauses: docs.len(),
            analyzer: options.analyzer.clone(),
            source_fingerprint: options.source_fingerprint.clone(),
            vectors: vectors.as_ref().map(|v| v.info.clone()),
        };
        let dir = root.join(generation_name(generation));
        let result = Self::write_generation(&dir, &manifest, None, docs, vectors, progress);
        if let Err(e) = result {
            let _ = fs::remove_dir_all(&dir);
            return Err(e);
        }
        Self::switch_to(root, generation)?;
        Self::open(root)
    }

    /// Adds clauses as a new generation; ids already in the library are refused. A library with
    /// vectors needs the new clauses' vectors, from the same model.
    pub fn add(
        &mut self,
        docs: &[CorpusDoc],
        vectors: Option<ClauseVectors>,
        progress: &dyn Progress,
    ) -> Result<(), LibraryError> {
        check_new_ids(docs, Some(&self.store))?;
        self.check_new_vectors(docs, vectors.as_ref())?;
        let _lock = self.lock_unchanged()?;
        self.commit_generation(true, docs, vectors, progress)
    }

    /// Removes the clauses whose id `remove` selects and adds `docs`, as one new generation: a
    /// changed contract re-ingested replaces its old clauses (the new ones may reuse their ids)
    /// without a window in which readers see neither. With no `docs`, a library with vectors
    /// needs no new ones (`vectors` may be `None`): this is how clauses are removed. The kept clauses keep their text,
    /// metadata and vectors; rows are renumbered, so the BM25 index and the vector index are
    /// rebuilt from them (an int8 index re-quantizes its own rounded vectors, which rounds them
    /// the same way again).
    pub fn replace(
        &mut self,
        remove: &dyn Fn(&str) -> bool,
        docs: &[CorpusDoc],
        vectors: Option<ClauseVectors>,
        progress: &dyn Progress,
    ) -> Result<(), LibraryError> {
        if !(docs.is_empty() && vectors.is_none()) {
            self.check_new_vectors(docs, vectors.as_ref())?;
        }
        let _lock = self.lock_unchanged()?;
        let mut all: Vec<CorpusDoc> = Vec::with_capacity(self.store.len() + docs.len());
        let old_vectors = self.vectors()?;
        let mut data: Vec<f32> = Vec::new();
        for row in 0..self.store.len() as u32 {
            let keep = self.store.id(row).is_some_and(|id| !remove(id));
            if !keep {
                continue;
            }
            all.push(self.store.clause(row)?);
            if let Some(index) = old_vectors {
                let vector = index.vector(row).ok_or_else(|| LibraryError::Corrupt {
                    path: self.generation_dir.join(VECTORS_DIR),
                    message: format!("no vector for row {row}"),
                })?;
                data.extend(vector);
            }
        }
        all.extend(docs.iter().cloned());
        check_new_ids(&all, None)?;
        let vectors = match (&self.manifest.vectors, vectors) {
            (Some(info), new) => {
                data.extend(new.map(|n| n.data).unwrap_or_default());
                Some(ClauseVectors {
                    info: info.clone(),
                    data,
                })
            }
            (None, _) => None,
        };
        self.commit_generation(false, &all, vectors, progress)
    }

    /// New clauses of an existing library need vectors exactly when it has them, from its model.
    fn check_new_vectors(
        &self,
        docs: &[CorpusDoc],
        vectors: Option<&ClauseVectors>,
    ) -> Result<(), LibraryError> {
        match (&self.manifest.vectors, vectors) {
            (Some(have), Some(new)) => {
                check_vector_count(new, docs.len())?;
                if have.model_id != new.info.model_id || have.dim != new.info.dim {
                    return Err(LibraryError::VectorMismatch(format!(
                        "the library's vectors come from model {} (dim {}), the new clauses' from {} (dim {}): rebuild with `precedent index`",
                        have.model_id, have.dim, new.info.model_id, new.info.dim
                    )));
                }
            }
            (Some(have), None) => {
                let model = &have.model_id;
                return Err(LibraryError::VectorMismatch(format!(
                    "the library has clause vectors ({model}); new clauses need vectors from the same model"
                )));
            }
            (None, Some(_)) => {
                return Err(LibraryError::VectorMismatch(
                    "the library has no vectors; rebuild it with a model to add vectors".into(),
                ))
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// Takes the write lock and checks that the generation this handle read is still the current
    /// one: a new generation built on an older one would drop another writer's clauses.
    fn lock_unchanged(&self) -> Result<WriteLock, LibraryError> {
        let lock = WriteLock::acquire(&self.root)?;
        let opened = self.generation();
        let current = read_current(&self.root)?;
        if current != opened {
            return Err(LibraryError::Changed {
                path: self.root.clone(),
                opened,
                current,
            });
        }
        Ok(lock)
    }

    /// Writes the next generation (this one's clauses followed by `docs` when `extends`, else
    /// `docs` alone), switches to it and reopens; a generation that fails to write is removed.
    /// Call with the lock held ([`Library::lock_unchanged`]).
    fn commit_generation(
        &mut self,
        extends: bool,
        docs: &[CorpusDoc],
        vectors: Option<ClauseVectors>,
        progress: &dyn Progress,
    ) -> Result<(), LibraryError> {
        let generation = Self::next_generation(&self.root)?;
        let kept = if extends { self.store.len() } else { 0 };
        let manifest = Manifest {
            generation,
            created_unix: now_unix(),
            clauses: kept + docs.len(),
            // The library no longer matches its original source alone.
            source_fingerprint: None,
            ..self.manifest.clone()
        };
        let dir = self.root.join(generation_name(generation));
        let previous = extends.then_some(&*self);
        let written = Self::write_generation(&dir, &manifest, previous, docs, vectors, progress);
        if let Err(e) = written {
            let _ = fs::remove_dir_all(&dir);
            return Err(e);
        }
        Self::switch_to(&self.root, generation)?;
        *self = Self::open(&self.root)?;
        Ok(())
    }

    fn write_generation(
        dir: &Path,
        manifest: &Manifest,
        previous: Option<&Library>,
        docs: &[CorpusDoc],
        vectors: Option<ClauseVectors>,
        progress: &dyn Progress,
    ) -> Result<(), LibraryError> {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        if let Some(new) = vectors {
            let vectors_dir = dir.join(VECTORS_DIR);
            progress.start("indexing vectors", docs.len() as u64);
            let index = match previous.filter(|p| p.manifest.vectors.is_some()) {
                Some(prev) => {
                    // A fresh copy of the previous store, so the generation in use stays
                    // untouched if anything below fails.
                    let mut index = precedent_vectors::open(
                        &prev.generation_dir.join(VECTORS_DIR),
                        &new.info.model_id,
                        new.info.dim,
                    )?;
                    index.add(&new.data)?;
                    index
                }
                None => precedent_vectors::build(new.info.kind, new.info.dim, new.data)?,
            };
            progress.finish();
            index.save(&vectors_dir, &new.info.model_id)?;
        }
        let lexical_dir = dir.join(LEXICAL_DIR);
        fs::create_dir_all(&lexical_dir).map_err(io_err(&lexical_dir))?;
        let first_row = previous.map_or(0, |p| p.store.len()) as u64;
        let mut lexical = match previous {
            Some(prev) => {
                link_or_copy_dir(&prev.generation_dir.join(LEXICAL_DIR), &lexical_dir)?;
                LexicalIndex::open(&lexical_dir, &manifest.analyzer)?
            }
            None => LexicalIndex::create(&lexical_dir, &manifest.analyzer)?,
        };
        progress.start("indexing clauses (BM25)", docs.len() as u64);
        let texts: Vec<String> = docs.iter().map(indexed_text).collect();
        lexical.add(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| (first_row + i as u64, t.as_str())),
            &|n| progress.advance(n),
        )?;
        progress.finish();
        let mut words = match previous {
            Some(prev) => prev.words()?.clone(),
            None => LibraryWords::default(),
        };
        words.add_texts(texts.iter().map(String::as_str));
        write_words(&dir.join(WORDS_FILE), &words)?;
        ClauseStore::write(dir, previous.map(|p| &p.store), docs)?;
        let manifest_path = dir.join(MANIFEST_FILE);
        let json =
            serde_json::to_vec_pretty(manifest).map_err(LibraryError::json(&manifest_path))?;
        write_atomically(&manifest_path, &json)
    }

    fn next_generation(root: &Path) -> Result<u64, LibraryError> {
        let mut highest = 0;
        for entry in fs::read_dir(root).map_err(io_err(root))? {
            let entry = entry.map_err(io_err(root))?;
            if let Some(n) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.strip_prefix("gen-"))
                .and_then(|n| n.parse::<u64>().ok())
            {
                highest = highest.max(n);
            }
        }
        Ok(highest + 1)
    }

    /// Points `CURRENT` at `generation` (atomic rename), then removes older generations and any
    /// half-written leftovers of crashed builds.
    fn switch_to(root: &Path, generation: u64) -> Result<(), LibraryError> {
        let name = generation_name(generation);
        write_atomically(&root.join(CURRENT_FILE), format!("{name}\n").as_bytes())?;
        for entry in fs::read_dir(root).map_err(io_err(root))?.flatten() {
            let file_name = entry.file_name();
            let Some(other) = file_name.to_str() else {
                continue;
            };
            if other.starts_with("gen-") && other != name {
                if let Err(e) = fs::remove_dir_all(entry.path()) {
                    tracing::warn!("could not remove old generation {other}: {e}");
                }
            }
        }
        Ok(())
    }

    /// Opens the current generation of the library in `root`.
    pub fn open(root: &Path) -> Result<Library, LibraryError> {
        let name = read_current(root)?;
        let generation_dir = root.join(&name);
        let manifest_path = generation_dir.join(MANIFEST_FILE);
        let raw = fs::read(&manifest_path).map_err(io_err(&manifest_path))?;
        let version: serde_json::Value =
            serde_json::from_slice(&raw).map_err(|e| LibraryError::Corrupt {
                path: manifest_path.clone(),
                message: e.to_string(),
            })?;
        let found = version
            .get("format_version")
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as u32;
        if found != FORMAT_VERSION {
            return Err(LibraryError::Version {
                path: root.to_path_buf(),
                found,
            });
        }
        let manifest: Manifest =
            serde_json::from_value(version).map_err(|e| LibraryError::Corrupt {
                path: manifest_path.clone(),
                message: e.to_string(),
            })?;
        let lexical = LexicalIndex::open(&generation_dir.join(LEXICAL_DIR), &manifest.analyzer)?;
        let store = ClauseStore::open(&generation_dir)?;
        Ok(Library {
            root: root.to_path_buf(),
            generation_dir,
            manifest,
            lexical,
            store,
            vectors: std::sync::OnceLock::new(),
            words: std::sync::OnceLock::new(),
        })
    }

    fn load_vectors(&self) -> Result<Option<Box<dyn VectorIndex>>, LibraryError> {
        let Some(info) = &self.manifest.vectors else {
            return Ok(None);
        };
        let dir = self.generation_dir.join(VECTORS_DIR);
        let index = precedent_vectors::open(&dir, &info.model_id, info.dim)?;
        if index.len() != self.manifest.clauses {
            return Err(LibraryError::Corrupt {
                path: dir,
                message: format!(
                    "{} clause vectors for {} clauses",
                    index.len(),
                    self.manifest.clauses
                ),
            });
        }
        Ok(Some(index))
    }

    /// The clause vectors, when the library was built with a model. Read from disk (and
    /// validated) on first call; a damaged store is an error on every call.
    pub fn vectors(&self) -> Result<Option<&dyn VectorIndex>, LibraryError> {
        match self
            .vectors
            .get_or_init(|| self.load_vectors().map_err(|e| e.to_string()))
        {
            Ok(index) => Ok(index.as_deref()),
            Err(message) => Err(LibraryError::Corrupt {
                path: self.generation_dir.join(VECTORS_DIR),
                message: message.clone(),
            }),
        }
    }

    /// The lowercase words of the library's clauses and how many clauses use each: what query
    /// words are spell-checked against (`precedent_text::spelling`). Read on first use from the
    /// generation's word file; a generation written before there was one counts them from the
    /// clause store instead (about a second per 100,000 clauses). Kept once read.
    pub fn words(&self) -> Result<&LibraryWords, LibraryError> {
        let path = self.generation_dir.join(WORDS_FILE);
        let counted = self.words.get_or_init(|| {
            if path.is_file() {
                return read_words(&path);
            }
            let mut words = LibraryWords::default();
            for row in 0..self.len() as u32 {
                let doc = self.store.clause(row).map_err(|e| e.to_string())?;
                words.add_texts([indexed_text(&doc).as_str()]);
            }
            Ok(words)
        });
        match counted {
            Ok(words) => Ok(words),
            Err(message) => Err(LibraryError::Corrupt {
                path,
                message: message.clone(),
            }),
        }
    }

    /// Which model embedded the clauses.
    pub fn vectors_info(&self) -> Option<&VectorsInfo> {
        self.manifest.vectors.as_ref()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The name of the generation `CURRENT` points at in `root` (`gen-000004`): a server
    /// compares it with [`Library::generation`] to see that a writer committed.
    pub fn current_generation(root: &Path) -> Result<String, LibraryError> {
        read_current(root)
    }

    /// The name of the generation this handle reads (`gen-000004`).
    pub fn generation(&self) -> String {
        self.generation_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Directory of the generation in use (where optional stores such as vectors live).
    pub fn generation_dir(&self) -> &Path {
        &self.generation_dir
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn lexical(&self) -> &LexicalIndex {
        &self.lexical
    }

    pub fn store(&self) -> &ClauseStore {
        &self.store
    }

    pub fn len(&self) -> usize {
        self.store.len()
    }

    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }
}

/// The name of the generation `CURRENT` points at, checked to be one.
fn read_current(root: &Path) -> Result<String, LibraryError> {
    let current_path = root.join(CURRENT_FILE);
    if !current_path.is_file() {
        return Err(LibraryError::NotALibrary {
            path: root.to_path_buf(),
        });
    }
    let current = fs::read_to_string(&current_path).map_err(io_err(&current_path))?;
    let name = current.trim();
    if !name.starts_with("gen-") || name.contains(['/', '\\']) {
        return Err(LibraryError::Corrupt {
            path: current_path,
            message: format!("unexpected content {name:?}"),
        });
    }
    Ok(name.to_owned())
}

/// Writes `bytes` to `path` through a temporary file, fsync and rename, so readers see either the
/// old or the new content, never a torn file.
/// Writes `words` as `word<TAB>count` lines, most used first (then alphabetically, so the file
/// is the same for the same clauses).
fn write_words(path: &Path, words: &LibraryWords) -> Result<(), LibraryError> {
    let mut counts: Vec<(&str, u32)> = words.counts().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut out = String::with_capacity(counts.len() * 12);
    for (word, clauses) in counts {
        out.push_str(word);
        out.push('\t');
        out.push_str(&clauses.to_string());
        out.push('\n');
    }
    write_atomically(path, out.as_bytes())
}

/// Reads a word file ([`write_words`]); a malformed line is an error naming the file and line.
fn read_words(path: &Path) -> Result<LibraryWords, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut counts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let parsed = line
            .split_once('\t')
            .and_then(|(w, c)| Some((w.to_owned(), c.parse::<u32>().ok()?)));
        match parsed {
            Some(entry) => counts.push(entry),
            None => {
                return Err(format!(
                    "{}:{}: expected `word<TAB>clause count`, got {line:?}",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(LibraryWords::from_counts(counts))
}

pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), LibraryError> {
    use std::io::Write;
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    {
        let mut f = fs::File::create(&tmp).map_err(io_err(&tmp))?;
        f.write_all(bytes).map_err(io_err(&tmp))?;
        f.sync_all().map_err(io_err(&tmp))?;
    }
    fs::rename(&tmp, path).map_err(io_err(path))?;
    if let Some(parent) = path.parent() {
        if let Ok(dir) = fs::File::open(parent) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

/// Hard-links immutable files (tantivy segments) from `from` into `to`; tantivy's mutable
/// bookkeeping files are copied so the new generation can change them without touching the old.
fn link_or_copy_dir(from: &Path, to: &Path) -> Result<(), LibraryError> {
    for entry in fs::read_dir(from).map_err(io_err(from))? {
        let entry = entry.map_err(io_err(from))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".lock") {
            continue;
        }
        let mutable = name == "meta.json" || name == ".managed.json";
        if mutable || fs::hard_link(&src, &dst).is_err() {
            fs::copy(&src, &dst).map_err(io_err(&src))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, text: &str) -> CorpusDoc {
        CorpusDoc::new(id, text)
    }

    fn sample() -> Vec<CorpusDoc> {
        vec![
            doc("cap", "In no event shall liability exceed the fees paid in the twelve months preceding the claim."),
            doc("law", "This Agreement shall be governed by the laws of the State of New York."),
            doc("indem", "Licensee shall indemnify and hold harmless Licensor from all losses."),
        ]
    }

    fn build_sample(root: &Path) -> Library {
        Library::build(root, &sample(), &BuildOptions::default(), None, &NoProgress).expect("build")
    }

    #[test]
    fn words_are_written_with_each_generation_and_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let mut lib = build_sample(&root);
        let governed = lib.words().expect("words").clauses_with("governed");
        assert!(governed >= 1);
        assert!(lib.generation_dir().join(WORDS_FILE).is_file());
        lib.add(
            &[doc("a", "Governed by the law of England.")],
            None,
            &NoProgress,
        )
        .expect("add");
        assert_eq!(
            lib.words().expect("words").clauses_with("governed"),
            governed + 1
        );
        lib.replace(&|id| id == "a", &[], None, &NoProgress)
            .expect("remove");
        assert_eq!(
            lib.words().expect("words").clauses_with("governed"),
            governed
        );
        // A generation written before word files existed counts its words from its clauses.
        let counted = lib.words().expect("words").len();
        fs::remove_file(lib.generation_dir().join(WORDS_FILE)).expect("remove words");
        let old = Library::open(&root).expect("open");
        assert_eq!(old.words().expect("counted from the store").len(), counted);
        // A damaged word file is an error naming the file and the line, not a guess.
        fs::write(
            lib.generation_dir().join(WORDS_FILE),
            "liability\t4\nbroken line\n",
        )
        .expect("write");
        let damaged = Library::open(&root).expect("open");
        let err = damaged.words().expect_err("damaged").to_string();
        assert!(err.contains("words.tsv:2"), "{err}");
    }

    #[test]
    fn a_second_writer_is_refused_and_nothing_is_lost() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        build_sample(&root);
        // Another process holding the lock (an OS lock on its own file handle, as a second
        // `precedent ingest` would): this process can neither rebuild nor add.
        let other = fs::File::open(root.join("LOCK")).expect("lock file");
        other.try_lock().expect("lock free between commits");
        let rebuilt = Library::build(
            &root,
            &[doc("x", "Other text.")],
            &BuildOptions::default(),
            None,
            &NoProgress,
        );
        assert!(
            matches!(rebuilt, Err(LibraryError::Locked { .. })),
            "{:?}",
            rebuilt.err()
        );
        let mut lib = Library::open(&root).expect("readers are never locked out");
        let added = lib.add(&[doc("new", "A new clause.")], None, &NoProgress);
        let err = added.expect_err("refused");
        assert!(
            err.to_string().contains("another process is writing"),
            "{err}"
        );
        assert_eq!(Library::open(&root).expect("open").len(), 3);
        drop(other);
        lib.add(&[doc("new", "A new clause.")], None, &NoProgress)
            .expect("free again");
        assert_eq!(Library::open(&root).expect("open").len(), 4);
    }

    #[test]
    fn replace_drops_the_selected_clauses_and_adds_new_ones_in_one_generation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let mut lib = build_sample(&root);
        let new_law = doc(
            "law",
            "This Agreement is governed by the laws of England and Wales.",
        );
        lib.replace(
            &|id| id == "law" || id == "indem",
            &[new_law],
            None,
            &NoProgress,
        )
        .expect("replace");
        let lib = Library::open(&root).expect("reopen");
        assert_eq!(lib.store().ids(), ["cap", "law"]);
        let law = lib.store().clause(1).expect("law");
        assert!(law.text.contains("England"), "{}", law.text);
        // The BM25 index was rebuilt over the new rows: the old text is gone, the new one found.
        let hits = |q: &str| {
            lib.lexical()
                .search(q, 10)
                .expect("search")
                .into_iter()
                .map(|(row, _)| lib.store().id(row).unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(hits("england"), ["law"]);
        assert!(hits("york").is_empty());
        assert!(hits("indemnify").is_empty());
        assert_eq!(hits("twelve months"), ["cap"]);
        // Ids must stay unique: adding a kept id again is refused and changes nothing.
        let mut lib = lib;
        let dup = lib.replace(&|_| false, &[doc("cap", "Again.")], None, &NoProgress);
        assert!(
            matches!(dup, Err(LibraryError::DuplicateId(_))),
            "{:?}",
            dup.err()
        );
        assert_eq!(Library::open(&root).expect("open").len(), 2);
    }

    #[test]
    fn a_commit_on_a_stale_view_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        build_sample(&root);
        let mut first = Library::open(&root).expect("open");
        let mut second = Library::open(&root).expect("open");
        first
            .add(&[doc("a", "Clause a.")], None, &NoProgress)
            .expect("first add");
        // `second` read the library before `first` committed: building on it would drop "a".
        let err = second
            .add(&[doc("b", "Clause b.")], None, &NoProgress)
            .expect_err("stale");
        assert!(matches!(err, LibraryError::Changed { .. }), "{err}");
        let now = Library::open(&root).expect("open");
        assert_eq!(now.len(), 4);
        assert!(now.store().ids().iter().any(|id| id == "a"));
        // Reopened, it commits on top of the other writer's clauses.
        let mut second = Library::open(&root).expect("reopen");
        second
            .add(&[doc("b", "Clause b.")], None, &NoProgress)
            .expect("add after reopening");
        assert_eq!(Library::open(&root).expect("open").len(), 5);
    }

    #[test]
    fn build_search_reopen_add() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let lib = build_sample(&root);
        let hits = lib
            .lexical()
            .search("governing laws of New York", 10)
            .expect("search");
        assert_eq!(lib.store().id(hits[0].0), Some("law"));
        drop(lib);

        let mut lib = Library::open(&root).expect("reopen without rebuilding");
        assert_eq!(lib.len(), 3);
        lib.add(
            &[doc(
                "term",
                "Either party may terminate this Agreement for convenience.",
            )],
            None,
            &NoProgress,
        )
        .expect("add");
        let hits = lib
            .lexical()
            .search("terminate for convenience", 10)
            .expect("search");
        assert_eq!(lib.store().id(hits[0].0), Some("term"));
        assert_eq!(
            lib.store().clause(hits[0].0).expect("clause").text,
            "Either party may terminate this Agreement for convenience."
        );
        // Old rows are unchanged after the add.
        let hits = lib.lexical().search("indemnify", 10).expect("search");
        assert_eq!(lib.store().id(hits[0].0), Some("indem"));
        let reopened = Library::open(&root).expect("reopen");
        assert_eq!(reopened.len(), 4);
        assert_eq!(reopened.manifest().generation, 2);
        // Only the current generation remains on disk.
        let gens = fs::read_dir(&root)
            .expect("ls")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("gen-"))
            })
            .count();
        assert_eq!(gens, 1);
    }

    #[test]
    fn duplicate_ids_are_refused_and_change_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let mut lib = build_sample(&root);
        let err = lib
            .add(&[doc("law", "dup")], None, &NoProgress)
            .expect_err("dup");
        assert!(err.to_string().contains("\"law\""), "{err}");
        assert_eq!(Library::open(&root).expect("open").len(), 3);
    }

    #[test]
    fn crash_mid_build_leaves_previous_library_usable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        build_sample(&root);
        // Simulate a build that died after writing part of a new generation.
        let partial = root.join(generation_name(2));
        fs::create_dir_all(partial.join(LEXICAL_DIR)).expect("mkdir");
        fs::write(partial.join(store::CLAUSES_FILE), b"{\"_id\": \"half").expect("write");
        let lib = Library::open(&root).expect("previous generation still opens");
        assert_eq!(lib.len(), 3);
        assert!(!lib
            .lexical()
            .search("indemnify", 5)
            .expect("search")
            .is_empty());
        // The next successful build cleans the leftovers.
        build_sample(&root);
        assert!(!partial.exists());
    }

    #[test]
    fn corrupt_store_is_reported_not_panicking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let lib = build_sample(&root);
        let clauses = lib.generation_dir().join(store::CLAUSES_FILE);
        drop(lib);
        let bytes = fs::read(&clauses).expect("read");
        fs::write(&clauses, &bytes[..bytes.len() / 2]).expect("truncate");
        let err = Library::open(&root).err().expect("must fail");
        assert!(err.to_string().contains("corrupt"), "{err}");
        let err = Library::open(&dir.path().join("nothing"))
            .err()
            .expect("must fail");
        assert!(err.to_string().contains("not a Precedent library"), "{err}");
    }

    fn unit(dim: usize, hot: usize) -> Vec<f32> {
        let mut v = vec![0.01f32; dim];
        v[hot] = 1.0;
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }

    fn vectors(model: &str, hots: &[usize]) -> ClauseVectors {
        ClauseVectors {
            info: VectorsInfo {
                model_id: model.into(),
                model_source: model.into(),
                dim: 8,
                kind: IndexKind::Flat,
                long_text: "trunc".into(),
            },
            data: hots.iter().flat_map(|&h| unit(8, h)).collect(),
        }
    }

    /// The sample with vectors from model "m1", one hot dimension per clause (0, 1, 2).
    fn build_sample_with_vectors(root: &Path) -> Library {
        Library::build(
            root,
            &sample(),
            &BuildOptions::default(),
            Some(vectors("m1", &[0, 1, 2])),
            &NoProgress,
        )
        .expect("build")
    }

    #[test]
    fn replace_keeps_the_kept_clauses_vectors_on_their_new_rows() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let mut lib = build_sample_with_vectors(&root);
        // "cap" (row 0, vector 0) goes; "law" and "indem" move to rows 0 and 1.
        let new = [doc("cap", "Liability is capped at the fees paid.")];
        let err = lib
            .replace(&|id| id == "cap", &new, None, &NoProgress)
            .expect_err("vectors needed");
        assert!(err.to_string().contains("need vectors"), "{err}");
        lib.replace(
            &|id| id == "cap",
            &new,
            Some(vectors("m1", &[5])),
            &NoProgress,
        )
        .expect("replace");
        let lib = Library::open(&root).expect("reopen");
        assert_eq!(lib.store().ids(), ["law", "indem", "cap"]);
        let index = lib.vectors().expect("readable").expect("vectors");
        assert_eq!(index.len(), 3);
        for (hot, id) in [(1, "law"), (2, "indem"), (5, "cap")] {
            let top = index.search(&unit(8, hot), 1).expect("search");
            assert_eq!(lib.store().id(top[0].row), Some(id), "vector {hot}");
        }
        assert!(index.search(&unit(8, 0), 1).expect("search")[0].score < 0.5);

        // Removing only: no new vectors needed, the kept ones follow their clauses.
        let mut lib = lib;
        lib.replace(&|id| id == "indem", &[], None, &NoProgress)
            .expect("remove");
        assert_eq!(lib.store().ids(), ["law", "cap"]);
        let index = lib.vectors().expect("readable").expect("vectors");
        assert_eq!(index.len(), 2);
        let top = index.search(&unit(8, 5), 1).expect("search");
        assert_eq!(lib.store().id(top[0].row), Some("cap"));
    }

    #[test]
    fn vectors_live_in_the_generation_and_follow_adds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let mut lib = build_sample_with_vectors(&root);
        let top = lib
            .vectors()
            .expect("readable")
            .expect("vectors")
            .search(&unit(8, 1), 1)
            .expect("search");
        assert_eq!(lib.store().id(top[0].row), Some("law"));
        assert_eq!(lib.vectors_info().map(|v| v.model_id.as_str()), Some("m1"));

        // Adding without vectors, or with another model's, is refused and changes nothing.
        let new = [doc("term", "terminate for convenience")];
        let err = lib.add(&new, None, &NoProgress).expect_err("no vectors");
        assert!(err.to_string().contains("need vectors"), "{err}");
        let err = lib
            .add(&new, Some(vectors("m2", &[3])), &NoProgress)
            .expect_err("other model");
        assert!(err.to_string().contains("m2"), "{err}");
        let err = lib
            .add(&new, Some(vectors("m1", &[3, 4])), &NoProgress)
            .expect_err("count");
        assert!(err.to_string().contains("1 clauses"), "{err}");
        assert_eq!(Library::open(&root).expect("open").len(), 3);

        lib.add(&new, Some(vectors("m1", &[3])), &NoProgress)
            .expect("add");
        let reopened = Library::open(&root).expect("reopen");
        let top = reopened
            .vectors()
            .expect("readable")
            .expect("vectors")
            .search(&unit(8, 3), 1)
            .expect("search");
        assert_eq!(reopened.store().id(top[0].row), Some("term"));
        let top = reopened
            .vectors()
            .expect("readable")
            .expect("vectors")
            .search(&unit(8, 0), 1)
            .expect("search");
        assert_eq!(reopened.store().id(top[0].row), Some("cap"));
        assert_eq!(
            reopened.vectors().expect("readable").map(|v| v.len()),
            Some(4)
        );
    }
}
