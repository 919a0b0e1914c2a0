//! Which libraries the shipped ACORD ranker fits: the ACORD corpus it was trained on, not a
//! tenth of it nor a library of other contracts' clauses (where servers and the CLI fall back to
//! hybrid by default).

use std::path::Path;

use precedent_formats::{read_corpus, CorpusDoc};
use precedent_learn::{LearnedModel, MIN_LIBRARY_FIT, SHIPPED_MODEL_DIR};
use precedent_library::{BuildOptions, Library, NoProgress};

fn library(dir: &Path, docs: &[CorpusDoc]) -> Library {
    Library::build(dir, docs, &BuildOptions::default(), None, &NoProgress).expect("library")
}

#[test]
fn the_shipped_ranker_fits_the_acord_corpus_only() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let model = LearnedModel::load(&root.join(SHIPPED_MODEL_DIR)).expect("shipped model");
    let corpus = read_corpus(&root.join("../shared/data/acord/corpus.jsonl")).expect("ACORD");
    let dir = tempfile::tempdir().expect("tempdir");

    let whole = model.library_fit(&library(&dir.path().join("all"), &corpus));
    assert!(whole > 0.99, "{whole}");
    let tenth = model.library_fit(&library(&dir.path().join("tenth"), &corpus[..393]));
    assert!(tenth > 0.0 && tenth < MIN_LIBRARY_FIT, "{tenth}");
    // The same texts under other ids (as ingest names clauses) are other clauses.
    let renamed: Vec<CorpusDoc> = corpus
        .iter()
        .take(500)
        .map(|d| CorpusDoc {
            id: format!("contract#{}", d.id),
            ..d.clone()
        })
        .collect();
    let other = model.library_fit(&library(&dir.path().join("other"), &renamed));
    assert_eq!(other, 0.0);
}
