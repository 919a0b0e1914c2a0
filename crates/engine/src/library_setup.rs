//! Libraries built from a clause corpus, and the models their pipelines read: what `index`,
//! `eval`, `train` and `ingest` share before any ranking happens.
//!
//! Why here: whether a cached evaluation library can be reused (same corpus, same model, same
//! long-text policy and vector index), how new clauses are embedded so that they match the
//! library's old ones, and which bi-encoder and cross-encoder a pipeline loads are decisions
//! about libraries and models; the CLI only turns its flags into an [`EmbedSettings`].

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use precedent_formats::CorpusDoc;
use precedent_library::{BuildOptions, ClauseVectors, IndexKind, Library, VectorsInfo};
use precedent_models::{CrossEncoder, Embedder, EmbeddingCache, LongTextPolicy};
use precedent_rank::{embed_clauses, EmbedSettings, PipelineModels};

use crate::Report;

/// How clause vectors are wanted: the settings, and the embedding cache to go through.
pub struct VectorPlan<'a> {
    pub settings: EmbedSettings,
    /// Embedding cache directory (keyed by model and text, so rebuilding does not recompute).
    pub cache: &'a Path,
}

/// The embedding settings a command's options name: the vector index (`flat`, `int8` or
/// `hnsw`), the long-text policy (`truncate` or `chunk`) and the bi-encoder.
pub fn embed_settings(model: &str, vector_index: &str, long_text: &str) -> Result<EmbedSettings> {
    let kind = match vector_index {
        "flat" => IndexKind::Flat,
        "int8" => IndexKind::Int8,
        "hnsw" => IndexKind::hnsw_default(),
        other => bail!("unknown --vector-index {other:?} (flat, int8 or hnsw)"),
    };
    let policy = match long_text {
        "truncate" => LongTextPolicy::Truncate,
        "chunk" => LongTextPolicy::ChunkMean { overlap_tokens: 32 },
        other => bail!("unknown --long-text {other:?} (truncate or chunk)"),
    };
    Ok(EmbedSettings {
        policy,
        kind,
        model_source: model.to_owned(),
    })
}

/// The settings a library's clauses were embedded with, so that new clauses are embedded
/// exactly as its existing ones were.
pub fn library_settings(info: &VectorsInfo) -> Result<EmbedSettings> {
    Ok(EmbedSettings {
        policy: policy_from_tag(&info.long_text)?,
        kind: info.kind,
        model_source: info.model_source.clone(),
    })
}

/// Inverse of `LongTextPolicy::tag`, for libraries that recorded how they were embedded.
pub fn policy_from_tag(tag: &str) -> Result<LongTextPolicy> {
    if tag == LongTextPolicy::Truncate.tag() {
        return Ok(LongTextPolicy::Truncate);
    }
    match tag.strip_prefix("chunkmean").map(str::parse) {
        Some(Ok(overlap_tokens)) => Ok(LongTextPolicy::ChunkMean { overlap_tokens }),
        _ => bail!("library records an unknown long-text policy {tag:?}"),
    }
}

/// Loads a bi-encoder, saying how to get one when it is missing.
pub fn load_embedder(spec: &str) -> Result<Embedder> {
    Embedder::load(spec).with_context(|| {
        format!(
            "loading bi-encoder {spec:?} (run scripts/setup.sh, pass --model DIR, or --no-vectors)"
        )
    })
}

/// Loads the model named by `settings` and embeds `docs` through the on-disk cache (without
/// it, with a warning, when the cache cannot be opened).
pub fn embed_docs(
    docs: &[CorpusDoc],
    settings: &EmbedSettings,
    cache_dir: &Path,
    report: &dyn Report,
) -> Result<ClauseVectors> {
    let cache = match EmbeddingCache::open(cache_dir) {
        Ok(cache) => Some(cache),
        Err(e) => {
            report.warn(&format!(
                "warning: embedding cache {} unusable ({e}); embedding without it",
                cache_dir.display()
            ));
            None
        }
    };
    let embedder = load_embedder(&settings.model_source)?;
    let texts: Vec<String> = docs.iter().map(precedent_library::indexed_text).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    Ok(embed_clauses(
        &embedder,
        cache.as_ref(),
        &refs,
        settings,
        report,
    )?)
}

/// FNV-1a of the file's bytes: a stable, dependency-free content fingerprint for cache keys.
pub fn fingerprint_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(crate::ingest::fingerprint(&bytes))
}

/// Refuses to let `eval`/`train --corpus C --index DIR` rebuild a library that was built from
/// something else (another corpus, or contracts by `ingest`): the rebuild would replace it.
pub fn refuse_to_replace(dir: &Path, fingerprint: &str) -> Result<()> {
    if !Library::exists(dir) {
        return Ok(());
    }
    let Ok(library) = Library::open(dir) else {
        // Unreadable: open_or_build says so and rebuilds, as for a cache.
        return Ok(());
    };
    if library.manifest().source_fingerprint.as_deref() != Some(fingerprint) {
        bail!(
            "{} holds a library built from something else (another corpus, or contracts by `ingest`), and would be replaced by one built from this corpus: give --index a new folder (eval: or leave out --corpus to score it as it is)",
            dir.display()
        );
    }
    Ok(())
}

/// Adds `docs` to the library at `index`, embedded exactly as its existing clauses were, under
/// the library's write lock (taken before embedding, so a second writer is refused before
/// either does the work). Returns the clause count before and after.
pub fn add_to_library(
    index: &Path,
    docs: &[CorpusDoc],
    cache: &Path,
    report: &dyn Report,
) -> Result<(usize, usize)> {
    let mut library = Library::open(index)?;
    let _lock = Library::lock(index)?;
    let before = library.len();
    let vectors = match library.vectors_info() {
        Some(info) => Some(embed_docs(docs, &library_settings(info)?, cache, report)?),
        None => None,
    };
    library.add(docs, vectors, report)?;
    Ok((before, library.len()))
}

/// What `precedent index` is asked to do: build (or replace) the library at `index` from the
/// corpus file `corpus`, or add the corpus's clauses to it.
pub struct IndexPlan<'a> {
    pub corpus: &'a Path,
    pub index: &'a Path,
    /// Add to the existing library instead of rebuilding it.
    pub add: bool,
    /// A new library's vector settings (none: BM25 only). An addition ignores them: new clauses
    /// are embedded as the library's own were ([`add_to_library`]).
    pub vectors: &'a dyn Fn() -> Result<Option<EmbedSettings>>,
    pub cache: &'a Path,
}

/// Indexes a clause corpus as `plan` asks, and returns the line `precedent index` ends with:
/// how many clauses went where, the library's size before and after an addition, and whether
/// a new library has vectors.
pub fn index_corpus(plan: &IndexPlan<'_>, report: &dyn Report) -> Result<String> {
    let started = std::time::Instant::now();
    let docs = precedent_formats::read_corpus(plan.corpus)?;
    // An empty corpus would replace a library with an empty one (or add nothing): most likely
    // the wrong file, and the library it would replace is kept.
    if docs.is_empty() {
        anyhow::bail!(
            "{}: no clauses in the corpus (expected one JSON object per line with \"_id\" and \"text\"); nothing was indexed",
            plan.corpus.display()
        );
    }
    let seconds = || started.elapsed().as_secs_f64();
    if plan.add {
        let (before, after) = add_to_library(plan.index, &docs, plan.cache, report)?;
        return Ok(format!(
            "added {} clauses to {} ({before} → {after}) in {:.1}s",
            docs.len(),
            plan.index.display(),
            seconds()
        ));
    }
    let library = build_library(
        plan.index,
        plan.corpus,
        &docs,
        plan.vectors,
        plan.cache,
        report,
    )?;
    let kind = match library.vectors_info() {
        Some(_) => " (BM25 + vectors)",
        None => " (BM25 only)",
    };
    Ok(format!(
        "indexed {} clauses{kind} into {} in {:.1}s",
        library.len(),
        plan.index.display(),
        seconds()
    ))
}

/// Builds (or atomically replaces) the library at `index` from the corpus file `corpus`'s
/// `docs`, fingerprinted so `eval` can reuse it, with vectors when `vectors` gives settings
/// (asked for under the write lock).
pub fn build_library(
    index: &Path,
    corpus: &Path,
    docs: &[CorpusDoc],
    vectors: &dyn Fn() -> Result<Option<EmbedSettings>>,
    cache: &Path,
    report: &dyn Report,
) -> Result<Library> {
    let options = BuildOptions {
        source_fingerprint: Some(fingerprint_file(corpus)?),
        ..BuildOptions::default()
    };
    let _lock = Library::lock(index)?;
    let vectors = match vectors()? {
        Some(settings) => Some(embed_docs(docs, &settings, cache, report)?),
        None => None,
    };
    Ok(Library::build(index, docs, &options, vectors, report)?)
}

/// The library of a clause corpus for `eval` and `train`: the one at `index` (refused if it
/// was built from something else, [`refuse_to_replace`]), else the cache under
/// `.precedent/eval/` named by the corpus's fingerprint; reused when it matches, else built
/// ([`open_or_build`]). `vectors` says how clause vectors are wanted, asked once the corpus
/// and the folder are known to be fine.
pub fn corpus_library<'a>(
    corpus: &Path,
    index: Option<&Path>,
    vectors: Option<&dyn Fn() -> Result<VectorPlan<'a>>>,
    report: &dyn Report,
) -> Result<Library> {
    let fingerprint = fingerprint_file(corpus)?;
    let index_dir = match index {
        Some(dir) => {
            refuse_to_replace(dir, &fingerprint)?;
            dir.to_path_buf()
        }
        None => std::path::PathBuf::from(".precedent/eval").join(&fingerprint),
    };
    let plan = vectors.map(|plan| plan()).transpose()?;
    open_or_build(&index_dir, corpus, &fingerprint, plan.as_ref(), report)
}

/// Reuses the library at `dir` if it was built from the same corpus content (and, when vectors
/// are wanted, has vectors from the same model and settings); rebuilds otherwise.
pub fn open_or_build(
    dir: &Path,
    corpus: &Path,
    fingerprint: &str,
    vectors: Option<&VectorPlan<'_>>,
    report: &dyn Report,
) -> Result<Library> {
    let settings = vectors.map(|v| &v.settings);
    let reusable = |quiet: bool| -> Option<Library> {
        if !Library::exists(dir) {
            return None;
        }
        match Library::open(dir) {
            Ok(library) => {
                let same_source =
                    library.manifest().source_fingerprint.as_deref() == Some(fingerprint);
                let vectors_ok = match (settings, library.vectors_info()) {
                    (None, _) => true,
                    (Some(s), Some(info)) => {
                        info.model_source == s.model_source
                            && info.long_text == s.policy.tag()
                            && info.kind == s.kind
                    }
                    (Some(_), None) => false,
                };
                if same_source && vectors_ok {
                    return Some(library);
                }
                if !quiet {
                    report.warn(&format!(
                        "library {} does not match this corpus/model; rebuilding",
                        dir.display()
                    ));
                }
            }
            Err(e) if !quiet => report.warn(&format!(
                "library {} unusable ({e}); rebuilding",
                dir.display()
            )),
            Err(_) => {}
        }
        None
    };
    if let Some(library) = reusable(false) {
        return Ok(library);
    }
    // Another process (a second eval in the same folder) may be building this cache right now:
    // wait for it and reuse its library rather than build it twice.
    let _lock = match Library::lock(dir) {
        Err(precedent_library::LibraryError::Locked { .. }) => {
            report.warn(&format!(
                "waiting for another process that is building {}",
                dir.display()
            ));
            Library::lock_waiting(dir)?
        }
        other => other?,
    };
    if let Some(library) = reusable(true) {
        return Ok(library);
    }
    let docs = precedent_formats::read_corpus(corpus)?;
    let options = BuildOptions {
        source_fingerprint: Some(fingerprint.to_owned()),
        ..BuildOptions::default()
    };
    let clause_vectors = match vectors {
        Some(plan) => Some(embed_docs(&docs, &plan.settings, plan.cache, report)?),
        None => None,
    };
    Ok(Library::build(
        dir,
        &docs,
        &options,
        clause_vectors,
        report,
    )?)
}

/// The second stage a command asks for: a reranker by name, its model, how many candidates it
/// reorders, and the hybrid pipelines' fusion weights.
#[derive(Debug, Clone, Default)]
pub struct RerankChoice<'a> {
    /// `cross-encoder`, or none.
    pub rerank: Option<&'a str>,
    /// The cross-encoder's directory.
    pub rerank_model: Option<&'a str>,
    pub rerank_top: usize,
    /// Fusion weights `(bm25, dense)` of the hybrid pipelines.
    pub weights: Option<(f32, f32)>,
}

/// Loads the models a pipeline needs: the library's own bi-encoder (or `model`) when
/// `needs_embedder` (dense stages), and the cross-encoder when reranking is asked for.
pub fn pipeline_models(
    pipeline: &str,
    needs_embedder: bool,
    library: &Library,
    model: Option<&str>,
    rerank: &RerankChoice<'_>,
) -> Result<PipelineModels> {
    let mut models = PipelineModels {
        fusion_weights: rerank.weights,
        ..PipelineModels::default()
    };
    if needs_embedder {
        let spec = match (model, library.vectors_info()) {
            (Some(spec), _) => spec.to_owned(),
            (None, Some(info)) => info.model_source.clone(),
            (None, None) => bail!(
                "pipeline {pipeline:?} needs clause vectors, but library {} has none: rebuild it with `precedent index` (without --no-vectors)",
                library.root().display()
            ),
        };
        models.embedder = Some(Arc::new(load_embedder(&spec)?));
    }
    match rerank.rerank {
        None => {}
        Some("cross-encoder") => {
            let Some(dir) = rerank.rerank_model else {
                bail!("--rerank cross-encoder needs --rerank-model DIR (a sentence-transformers CrossEncoder directory)");
            };
            let model = CrossEncoder::load(dir)
                .with_context(|| format!("loading cross-encoder {dir:?}"))?;
            models.cross_encoder = Some(Arc::new(model));
            models.rerank_top = rerank.rerank_top;
        }
        Some(other) => bail!("unknown reranker {other:?} (known: cross-encoder)"),
    }
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_builds_then_adds_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let corpus = dir.path().join("corpus.jsonl");
        let line = |id: &str| format!("{{\"_id\": \"{id}\", \"text\": \"Clause {id}.\"}}\n");
        std::fs::write(&corpus, line("a") + &line("b")).expect("write");
        let index = dir.path().join("lib");
        let no_vectors = || Ok(None);
        let mut plan = IndexPlan {
            corpus: &corpus,
            index: &index,
            add: false,
            vectors: &no_vectors,
            cache: dir.path(),
        };
        let built = index_corpus(&plan, &crate::Silent).expect("index");
        assert!(
            built.starts_with("indexed 2 clauses (BM25 only) into "),
            "{built}"
        );
        std::fs::write(&corpus, line("c")).expect("write");
        plan.add = true;
        let added = index_corpus(&plan, &crate::Silent).expect("add");
        assert!(added.starts_with("added 1 clauses to "), "{added}");
        assert!(added.contains("(2 → 3)"), "{added}");

        // An empty corpus is refused, and the library it would have replaced still opens.
        std::fs::write(&corpus, "").expect("write");
        plan.add = false;
        let refused = index_corpus(&plan, &crate::Silent).expect_err("empty corpus");
        assert!(refused.to_string().contains("no clauses"), "{refused:#}");
        let kept = precedent_library::Library::open(&index).expect("the library is kept");
        assert_eq!(kept.len(), 3);
    }
}
