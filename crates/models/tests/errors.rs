//! Broken or missing model files must produce a `ModelError`, never a panic.

use std::path::{Path, PathBuf};

use precedent_models::{CrossEncoder, Embedder, ModelError};

fn tiny() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-cross-encoder")
}

/// Copies the tiny model into a temp dir so a test can damage it.
fn copy_tiny() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(tiny()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
    }
    tmp
}

fn load_err(dir: &Path) -> ModelError {
    match Embedder::load(dir.to_str().unwrap()) {
        Ok(_) => panic!("loading {} should fail", dir.display()),
        Err(e) => e,
    }
}

#[test]
fn truncated_weights_are_an_error() {
    let tmp = copy_tiny();
    let w = tmp.path().join("model.safetensors");
    let len = std::fs::metadata(&w).unwrap().len();
    for keep in [0, 7, 100, len / 2, len - 1] {
        let data = std::fs::read(tiny().join("model.safetensors")).unwrap();
        std::fs::write(&w, &data[..keep as usize]).unwrap();
        let e = load_err(tmp.path());
        eprintln!("{e}");
        assert!(matches!(e, ModelError::Weights { .. }), "keep={keep}: {e}");
        assert!(e.to_string().contains("model.safetensors"), "{e}");
        assert!(CrossEncoder::load(tmp.path().to_str().unwrap()).is_err());
    }
}

#[test]
fn garbage_weights_are_an_error() {
    let tmp = copy_tiny();
    let mut junk = (u64::MAX / 2).to_le_bytes().to_vec(); // absurd header length
    junk.extend_from_slice(b"{not json");
    std::fs::write(tmp.path().join("model.safetensors"), junk).unwrap();
    assert!(matches!(load_err(tmp.path()), ModelError::Weights { .. }));
}

#[test]
fn missing_directory_is_a_clear_error() {
    let e = Embedder::load("/nonexistent/precedent/model")
        .err()
        .unwrap();
    assert!(matches!(e, ModelError::MissingDirectory(_)), "{e}");
    assert!(
        e.to_string().contains("/nonexistent/precedent/model"),
        "{e}"
    );
}

#[test]
fn missing_files_are_named() {
    for file in ["model.safetensors", "tokenizer.json", "config.json"] {
        let tmp = copy_tiny();
        std::fs::remove_file(tmp.path().join(file)).unwrap();
        let e = load_err(tmp.path());
        assert!(matches!(e, ModelError::MissingFile { .. }), "{e}");
        assert!(e.to_string().contains(file), "{e}");
    }
}

#[test]
fn bad_config_is_an_error() {
    let tmp = copy_tiny();
    let cfg = tmp.path().join("config.json");
    std::fs::write(&cfg, "{\"hidden_size\": 32").unwrap();
    assert!(matches!(load_err(tmp.path()), ModelError::Config { .. }));
    // Config that disagrees with the weights' shapes.
    let good = std::fs::read_to_string(tiny().join("config.json")).unwrap();
    std::fs::write(
        &cfg,
        good.replace("\"intermediate_size\": 64", "\"intermediate_size\": 65"),
    )
    .unwrap();
    let e = load_err(tmp.path());
    assert!(matches!(e, ModelError::Weights { .. }), "{e}");
    assert!(e.to_string().contains("intermediate"), "{e}");
    // Unsupported architecture.
    std::fs::write(
        &cfg,
        good.replace("\"model_type\": \"bert\"", "\"model_type\": \"t5\""),
    )
    .unwrap();
    assert!(matches!(load_err(tmp.path()), ModelError::Config { .. }));
}

#[test]
fn corrupt_tokenizer_is_an_error() {
    let tmp = copy_tiny();
    std::fs::write(tmp.path().join("tokenizer.json"), "{\"version\": ").unwrap();
    assert!(matches!(load_err(tmp.path()), ModelError::Tokenizer { .. }));
}

#[test]
fn unsupported_st_module_is_refused() {
    let tmp = copy_tiny();
    std::fs::write(
        tmp.path().join("modules.json"),
        r#"[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
            {"idx":1,"name":"1","path":"2_Dense","type":"sentence_transformers.models.Dense"}]"#,
    )
    .unwrap();
    let e = load_err(tmp.path());
    assert!(e.to_string().contains("Dense"), "{e}");
}

#[test]
fn unreachable_hub_model_says_how_to_fix() {
    // The hub is unreachable in CI; elsewhere this id does not exist. Either way the
    // error must say what to do instead.
    let e = Embedder::load("precedent-test-nobody/no-such-model-0")
        .err()
        .unwrap();
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(matches!(e, ModelError::Hub { .. }), "{msg}");
    assert!(
        msg.contains("pass its path") || msg.contains("pip install"),
        "{msg}"
    );
}
