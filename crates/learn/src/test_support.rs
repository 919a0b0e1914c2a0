//! Small libraries with hand-made vectors for the crate's unit tests.

use std::path::Path;
use std::sync::Arc;

use precedent_formats::CorpusDoc;
use precedent_library::{BuildOptions, ClauseVectors, IndexKind, Library, NoProgress, VectorsInfo};

pub(crate) const DIM: usize = 8;

/// A unit vector leaning on dimension `hot`.
pub(crate) fn unit(hot: usize) -> Vec<f32> {
    let mut v = vec![0.05f32; DIM];
    v[hot % DIM] = 1.0;
    crate::memory::normalize(&mut v);
    v
}

/// A library of `docs` (id, text), clause i's vector leaning on dimension i (without vectors
/// when `vectors` is false).
pub(crate) fn library(root: &Path, docs: &[(&str, &str)], vectors: bool) -> Arc<Library> {
    let docs: Vec<CorpusDoc> = docs.iter().map(|(id, t)| CorpusDoc::new(*id, *t)).collect();
    let vectors = vectors.then(|| ClauseVectors {
        info: VectorsInfo {
            model_id: "test".into(),
            model_source: "test".into(),
            dim: DIM,
            kind: IndexKind::Flat,
            long_text: "trunc".into(),
        },
        data: (0..docs.len()).flat_map(unit).collect(),
    });
    Arc::new(
        Library::build(root, &docs, &BuildOptions::default(), vectors, &NoProgress)
            .expect("library"),
    )
}
