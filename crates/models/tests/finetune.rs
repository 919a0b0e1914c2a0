//! Fine-tuning a cross-encoder, on the tiny randomly initialised BERT fixture (2 layers,
//! hidden size 32) so that it runs in a second: the training encoder must compute what
//! PyTorch and our inference encoder compute, learning must lower the loss, and the saved
//! folder must score exactly as the trainer did.

use std::path::{Path, PathBuf};

use precedent_models::{
    CrossEncoder, CrossEncoderTrainer, FineTuneOptions, MultiLabelTrainer, Pooling,
    SequenceClassifier, TrainingPair,
};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    pairs: Vec<(String, String)>,
    logits: Vec<f32>,
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-cross-encoder")
}

fn reference() -> Reference {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tiny_cross_encoder_reference.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn options(steps: usize) -> FineTuneOptions {
    FineTuneOptions {
        learning_rate: 1e-3,
        steps,
        batch_size: 4,
        max_len: 64,
        warmup_fraction: 0.0,
        ..FineTuneOptions::default()
    }
}

fn batch() -> Vec<TrainingPair<'static>> {
    vec![
        TrainingPair {
            query: "cap on liability",
            clause: "In no event shall either party's aggregate liability exceed the fees paid.",
            target: 1.0,
        },
        TrainingPair {
            query: "cap on liability",
            clause: "This Agreement is governed by the laws of the State of New York.",
            target: 0.0,
        },
        TrainingPair {
            query: "governing law",
            clause: "This Agreement is governed by the laws of the State of New York.",
            target: 1.0,
        },
        TrainingPair {
            query: "governing law",
            clause: "Licensee shall indemnify Licensor against all third party claims.",
            target: 0.25,
        },
    ]
}

#[test]
fn training_encoder_matches_pytorch_before_any_step() {
    // The fixture is already a one-logit cross-encoder, so its head is kept: with dropout
    // off, the differentiable encoder must give PyTorch's logits.
    let r = reference();
    let whole = FineTuneOptions {
        max_len: 512,
        ..options(1)
    };
    let mut trainer =
        CrossEncoderTrainer::from_encoder(fixture().to_str().unwrap(), whole).unwrap();
    let pairs: Vec<(&str, &str)> = r
        .pairs
        .iter()
        .map(|(q, d)| (q.as_str(), d.as_str()))
        .collect();
    let got = trainer.score_pairs(&pairs).unwrap();
    for (i, (g, want)) in got.iter().zip(&r.logits).enumerate() {
        assert!((g - want).abs() < 1e-4, "pair {i}: got {g}, PyTorch {want}");
    }
}

#[test]
fn training_lowers_the_loss_and_the_saved_model_scores_as_trained() {
    let steps = 30;
    // Without dropout the loss on a repeated batch must fall step after step (with it,
    // this random tiny model's loss is too noisy to read in 30 steps).
    let steady = FineTuneOptions {
        dropout: 0.0,
        ..options(steps)
    };
    let mut trainer =
        CrossEncoderTrainer::from_encoder(fixture().to_str().unwrap(), steady).unwrap();
    let batch = batch();
    let mut losses = Vec::new();
    for _ in 0..steps {
        losses.push(trainer.train_step(&batch).unwrap());
    }
    assert_eq!(trainer.steps_done(), steps);
    let first = losses[..3].iter().sum::<f32>() / 3.0;
    let last = losses[steps - 3..].iter().sum::<f32>() / 3.0;
    assert!(
        last < 0.8 * first,
        "loss did not fall: first {first}, last {last}"
    );

    let pairs: Vec<(&str, &str)> = batch.iter().map(|p| (p.query, p.clause)).collect();
    let trained = trainer.score_pairs(&pairs).unwrap();
    // The wanted order holds on the training pairs.
    assert!(trained[0] > trained[1], "{trained:?}");
    assert!(trained[2] > trained[3], "{trained:?}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fine-tuned");
    trainer.save(&out, &[("note.txt", b"first")]).unwrap();
    // A second save over the first replaces it whole.
    trainer.save(&out, &[("note.txt", b"second")]).unwrap();
    assert_eq!(std::fs::read(out.join("note.txt")).unwrap(), b"second");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("fine-tuned")]);

    let served = CrossEncoder::load(out.to_str().unwrap()).unwrap();
    assert_eq!(served.max_len(), 64);
    let scores = served.score_pairs(&pairs).unwrap();
    for (s, t) in scores.iter().zip(&trained) {
        assert!((s - t).abs() < 1e-4, "served {s}, trainer {t}");
    }
}

#[test]
fn training_is_reproducible_from_its_seed() {
    let run = || {
        let mut t =
            CrossEncoderTrainer::from_encoder(fixture().to_str().unwrap(), options(3)).unwrap();
        (0..3)
            .map(|_| t.train_step(&batch()).unwrap())
            .collect::<Vec<f32>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn bad_options_are_refused_with_a_reason() {
    let too_long = FineTuneOptions {
        max_len: 100_000,
        ..options(1)
    };
    let err = CrossEncoderTrainer::from_encoder(fixture().to_str().unwrap(), too_long)
        .err()
        .expect("a window longer than the model's must be refused")
        .to_string();
    assert!(err.contains("longer than the model"), "{err}");
    let mut trainer =
        CrossEncoderTrainer::from_encoder(fixture().to_str().unwrap(), options(1)).unwrap();
    assert!(trainer.train_step(&[]).is_err());
}

/// Four sentences and their wanted labels (three labels; the last sentence has none).
fn labelled_sentences() -> (Vec<&'static str>, Vec<Vec<f32>>) {
    (
        vec![
            "we may terminate your account at any time without notice .",
            "we may change these terms at any time .",
            "these terms are governed by the laws of england .",
            "you can upload a photo to your profile .",
        ],
        vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![0.0, 0.0, 0.0],
        ],
    )
}

#[test]
fn multi_label_training_learns_each_label_and_serves_as_trained() {
    learns_each_label_and_serves_as_trained(Pooling::Cls);
}

/// A head over the mean of the token states (a sentence-transformers checkpoint's sentence
/// vector): trained, saved and served the same way, and refused as a cross-encoder.
#[test]
fn mean_pooled_multi_label_training_learns_each_label_and_serves_as_trained() {
    let out = learns_each_label_and_serves_as_trained(Pooling::Mean);
    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("multi-label/config.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(config["precedent_pooling"], "mean");
    let err = CrossEncoder::load(out.path().join("multi-label").to_str().unwrap())
        .err()
        .expect("a mean-pooled classifier is not a cross-encoder");
    assert!(err.to_string().contains("mean-pooled"), "{err}");
}

fn learns_each_label_and_serves_as_trained(pooling: Pooling) -> tempfile::TempDir {
    let steps = 80;
    let steady = FineTuneOptions {
        dropout: 0.0,
        learning_rate: 3e-3,
        pooling,
        ..options(steps)
    };
    let mut trainer = MultiLabelTrainer::from_encoder(fixture().to_str().unwrap(), steady, 3)
        .unwrap()
        .with_positive_weights(vec![2.0, 2.0, 2.0])
        .unwrap();
    assert_eq!(trainer.num_labels(), 3);
    let (texts, targets) = labelled_sentences();
    let mut losses = Vec::new();
    for _ in 0..steps {
        losses.push(trainer.train_step(&texts, &targets).unwrap());
    }
    let first = losses[..3].iter().sum::<f32>() / 3.0;
    let last = losses[steps - 3..].iter().sum::<f32>() / 3.0;
    assert!(
        last < 0.5 * first,
        "loss did not fall: first {first}, last {last} ({losses:?})"
    );
    // Each sentence's own label now has a positive logit and every other one a negative one.
    let logits = trainer.logits(&texts).unwrap();
    for (row, (got, want)) in logits.iter().zip(&targets).enumerate() {
        assert_eq!(got.len(), 3);
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(*g > 0.0, *w == 1.0, "sentence {row}, label {k}: {got:?}");
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("multi-label");
    trainer.save(&out, &[]).unwrap();
    let served = SequenceClassifier::load(out.to_str().unwrap()).unwrap();
    assert_eq!(served.num_labels(), 3);
    let scored = served.logits(&texts).unwrap();
    for (s, t) in scored.iter().flatten().zip(logits.iter().flatten()) {
        assert!((s - t).abs() < 1e-4, "served {s}, trainer {t}");
    }
    dir
}

#[test]
fn multi_label_trainer_refuses_bad_targets_and_weights() {
    let trainer =
        || MultiLabelTrainer::from_encoder(fixture().to_str().unwrap(), options(1), 3).unwrap();
    assert!(trainer().with_positive_weights(vec![1.0, 2.0]).is_err());
    assert!(trainer()
        .with_positive_weights(vec![1.0, 0.0, 2.0])
        .is_err());
    let mut t = trainer();
    let (texts, _) = labelled_sentences();
    let short = vec![vec![1.0, 0.0]; texts.len()];
    assert!(t.train_step(&texts, &short).is_err());
    assert!(t.train_step(&[], &[]).is_err());
    assert!(MultiLabelTrainer::from_encoder(fixture().to_str().unwrap(), options(1), 0).is_err());
}

/// The safetensors of a saved folder, by name.
fn saved_weights(dir: &Path) -> std::collections::HashMap<String, candle_core::Tensor> {
    candle_core::safetensors::load(dir.join("model.safetensors"), &candle_core::Device::Cpu)
        .unwrap()
}

#[test]
fn frozen_layers_stay_as_loaded_while_the_top_learns_from_states_computed_once() {
    let steps = 80;
    let frozen = FineTuneOptions {
        dropout: 0.0,
        learning_rate: 3e-3,
        frozen_layers: 1,
        ..options(steps)
    };
    let (texts, targets) = labelled_sentences();
    let mut trainer =
        MultiLabelTrainer::from_encoder(fixture().to_str().unwrap(), frozen.clone(), 3).unwrap();
    let states = trainer.frozen_states(&texts).unwrap();
    assert_eq!(states.len(), texts.len());
    assert!(states.iter().all(|s| s.len() > 2), "[CLS] … [SEP] at least");
    // Trained on the states, scored from the texts: the labels come out right only if a
    // state stands for its text (padding to a batch's longest sentence included).
    let before = trainer.logits(&texts).unwrap();
    let refs: Vec<_> = states.iter().collect();
    let mut losses = Vec::new();
    for _ in 0..steps {
        losses.push(trainer.train_step_on_states(&refs, &targets).unwrap());
    }
    let first = losses[..3].iter().sum::<f32>() / 3.0;
    let last = losses[steps - 3..].iter().sum::<f32>() / 3.0;
    assert!(last < 0.5 * first, "loss did not fall: {losses:?}");
    let after = trainer.logits(&texts).unwrap();
    assert_ne!(before, after);
    for (row, (got, want)) in after.iter().zip(&targets).enumerate() {
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(*g > 0.0, *w == 1.0, "sentence {row}, label {k}: {got:?}");
        }
    }

    // The saved folder: embeddings and layer 0 as loaded, layer 1 trained.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("top-tuned");
    trainer.save(&out, &[]).unwrap();
    let base = saved_weights(&fixture());
    let tuned = saved_weights(&out);
    let same = |name: &str| {
        let key = |w: &std::collections::HashMap<String, candle_core::Tensor>| {
            w.keys()
                .find(|k| k.ends_with(name))
                .cloned()
                .unwrap_or_else(|| panic!("no {name}"))
        };
        let a = base[&key(&base)]
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let b = tuned[&key(&tuned)]
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        a == b
    };
    assert!(same("embeddings.word_embeddings.weight"));
    assert!(same("encoder.layer.0.attention.self.query.weight"));
    assert!(same("encoder.layer.0.output.LayerNorm.weight"));
    assert!(!same("encoder.layer.1.attention.self.query.weight"));
    assert!(!same("encoder.layer.1.output.dense.weight"));

    // No frozen layer: no states; more frozen layers than the encoder has: refused.
    let mut whole =
        MultiLabelTrainer::from_encoder(fixture().to_str().unwrap(), options(1), 3).unwrap();
    assert!(whole.frozen_states(&texts).is_err());
    let too_many = FineTuneOptions {
        frozen_layers: 3,
        ..options(1)
    };
    assert!(MultiLabelTrainer::from_encoder(fixture().to_str().unwrap(), too_many, 3).is_err());
}
