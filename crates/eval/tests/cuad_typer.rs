//! The typer and its cross-validation on real CUAD contracts (small subsets, to keep CI fast).

use std::path::Path;
use std::sync::Arc;

use precedent_clause_types::candidates::Candidate;
use precedent_clause_types::clause_classifier::{
    span_examples, ClassifierOptions, ClauseClassifier,
};
use precedent_clause_types::dense::SentenceEmbedder;
use precedent_clause_types::selection::{Chosen, Selection};
use precedent_clause_types::typer::prepare;
use precedent_clause_types::{ClauseTyper, TrainOptions};
use precedent_cuad::{category_index, load, CuadContract};
use precedent_engine::MiniLmSentences;
use precedent_eval::cuad::{cross_validate, CvOptions};
use precedent_models::Embedder;

fn cuad_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad"
    ))
}

/// The same vectors under another model's name.
struct Renamed(MiniLmSentences);

impl SentenceEmbedder for Renamed {
    fn embed_sentences(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        self.0.embed_sentences(texts)
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn model_id(&self) -> &str {
        "another/model"
    }
}

/// Whether the most confident of a contract's category-`k` findings overlaps its first annotation
/// of the category.
fn best_is_annotated(
    c: &CuadContract,
    candidates: &[Candidate],
    chosen: &[Chosen],
    k: usize,
) -> bool {
    let best = chosen[k]
        .candidates
        .iter()
        .zip(&chosen[k].confidence)
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(&i, _)| candidates[i].span.clone());
    let gold = c.spans_of(k).next().unwrap().span.clone().unwrap();
    best.is_some_and(|s| s.start < gold.end && gold.start < s.end)
}

fn quick() -> TrainOptions {
    TrainOptions {
        epochs: 2,
        ..TrainOptions::default()
    }
}

#[test]
fn learns_governing_law_and_round_trips() {
    let data = load(cuad_dir()).unwrap();
    let train: Vec<&_> = data.contracts.iter().take(60).collect();
    let prepared = prepare(&train);
    let refs: Vec<&_> = prepared.iter().collect();
    let typer = ClauseTyper::train(&refs, &quick(), "test");
    let again = ClauseTyper::train(&refs, &quick(), "test");
    let clause = "This Agreement shall be governed by and construed in accordance with the laws of the State of New York, without regard to its conflict of laws principles.";
    assert_eq!(
        typer.classify(clause),
        again.classify(clause),
        "training is deterministic"
    );
    let ranked = typer.classify(clause);
    assert_eq!(ranked[0].0, "Governing Law", "{ranked:?}");
    assert!(ranked[0].1 > 0.5, "{ranked:?}");
    let audit = "Licensee shall keep complete and accurate books and records, and Licensor may, upon thirty days notice, audit such books and records to verify royalty payments.";
    let ranked = typer.classify(audit);
    assert!(
        ranked.iter().take(3).any(|(c, _)| *c == "Audit Rights"),
        "{ranked:?}"
    );

    // Held-out contracts: the annotated governing-law clause is among the top 3 candidates in
    // at least 8 of the next 10 contracts that have one.
    let law = category_index("Governing Law").unwrap();
    let held_out: Vec<_> = data
        .contracts
        .iter()
        .skip(60)
        .filter(|c| c.spans_of(law).next().is_some())
        .take(10)
        .collect();
    let found = |typer: &ClauseTyper| {
        held_out
            .iter()
            .filter(|c| {
                let mut scored = typer.review(&c.text);
                scored.sort_by(|a, b| b.scores[law].total_cmp(&a.scores[law]));
                let gold = c.spans_of(law).next().unwrap().span.clone().unwrap();
                scored
                    .iter()
                    .take(3)
                    .any(|s| s.candidate.span.start < gold.end && gold.start < s.candidate.span.end)
            })
            .count()
    };
    let first_stage = found(&typer);
    assert!(first_stage >= 8, "first stage: {first_stage} of 10");
    // With the clause classifier its second stage reads (trained on the same contracts'
    // spans), the typer's confidences are the second stage's and still find the clause.
    let classifier = ClauseClassifier::train(
        &span_examples(&train),
        &ClassifierOptions {
            threshold_folds: 0,
            ..ClassifierOptions::default()
        },
        "test",
    )
    .unwrap();
    let text = &held_out[0].text;
    let before = typer.review(text);
    let typer = typer.with_clause_classifier(Some(std::sync::Arc::new(classifier)));
    let after = typer.review(text);
    assert_eq!(before.len(), after.len());
    assert!(before
        .iter()
        .zip(&after)
        .any(|(b, a)| (b.scores[law] - a.scores[law]).abs() > 1e-3));
    let found = found(&typer);
    assert!(found >= 8, "{found} of 10");
    // Findings as `review` lists them (the shipped novelty step after the second stage): the
    // most confident Governing Law finding is still the annotated clause, while the Parties
    // lines that only repeat names already given above drop below 0.5, so far fewer Parties
    // findings pass 0.5 than second-stage confidences would pass.
    let parties = category_index("Parties").unwrap();
    let (mut law_found, mut parties_before, mut parties_after) = (0, 0, 0);
    for c in &held_out {
        let (candidates, chosen) = typer.findings(&c.text, &Selection::default());
        let second_stage = typer.review(&c.text);
        for k in [law, parties] {
            assert!(chosen[k].candidates.len() <= 20);
            assert_eq!(chosen[k].candidates.len(), chosen[k].confidence.len());
        }
        law_found += usize::from(best_is_annotated(c, &candidates, &chosen, law));
        let p = &chosen[parties];
        parties_before += p
            .candidates
            .iter()
            .filter(|&&i| second_stage[i].scores[parties] >= 0.5)
            .count();
        parties_after += p.confidence.iter().filter(|&&x| x >= 0.5).count();
    }
    assert!(law_found >= 8, "{law_found} of 10");
    assert!(
        2 * parties_after < parties_before,
        "Parties findings at 0.5: {parties_after} after the novelty step, {parties_before} before"
    );

    // With the sentence-embedding view (MiniLM over each sentence, the shipped dense second
    // stage), the confidences change and the governing-law clause is still the best finding
    // (3 of these 4 contracts with word features alone, measured).
    let mut typer = typer;
    // Per contract: the Governing Law findings' confidences, and whether the best is the
    // annotated clause (one embedding pass per contract and view).
    let law_findings = |typer: &ClauseTyper, c: &CuadContract| {
        let (candidates, chosen) = typer.findings(&c.text, &Selection::default());
        let found = best_is_annotated(c, &candidates, &chosen, law);
        (chosen[law].confidence.clone(), found)
    };
    let sample = &held_out[..4];
    let plain: Vec<_> = sample.iter().map(|c| law_findings(&typer, c)).collect();
    assert!(!typer.reads_sentence_embeddings());
    typer
        .set_sentence_embedder(Arc::new(MiniLmSentences(Embedder::load_default().unwrap())))
        .unwrap();
    assert!(typer.reads_sentence_embeddings());
    let mut found = 0;
    for (c, (plain, _)) in sample.iter().zip(&plain) {
        let (dense, gold_first) = law_findings(&typer, c);
        assert!(
            dense.len() != plain.len()
                || dense.iter().zip(plain).any(|(d, p)| (d - p).abs() > 1e-3),
            "{}: the view changed no confidence",
            c.id
        );
        found += usize::from(gold_first);
    }
    assert!(found >= 3, "{found} of 4");
    // An embedder of another model is refused and leaves the typer as it was.
    let refused = typer.set_sentence_embedder(Arc::new(Renamed(MiniLmSentences(
        Embedder::load_default().unwrap(),
    ))));
    assert!(refused.unwrap_err().to_string().contains("fitted on"));
    assert!(typer.reads_sentence_embeddings());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typer.bin");
    typer.save(&path).unwrap();
    let loaded = ClauseTyper::load(&path).unwrap();
    assert_eq!(loaded.classify_scores(audit), typer.classify_scores(audit));
    assert_eq!(loaded.info(), typer.info());
    std::fs::write(&path, b"PRTYPER1garbage").unwrap();
    assert!(ClauseTyper::load(&path)
        .unwrap_err()
        .to_string()
        .contains("not a clause typer"));
}

#[test]
fn cross_validation_scores_held_out_contracts() {
    let mut data = load(cuad_dir()).unwrap();
    data.contracts.truncate(30);
    let mut options = CvOptions {
        folds: 3,
        train: quick(),
        ..CvOptions::default()
    };
    // The shipped second stage and novelty step, with 40 trees a set instead of 300 (steeper
    // steps): the same code paths, with 30 contracts, at a third of the test's time.
    let light = |boost: &mut precedent_ml::boost::BoostOptions| {
        boost.trees = 40;
        boost.learning_rate = 0.2;
    };
    let stack = options
        .second_stage
        .as_mut()
        .expect("second stage by default");
    light(&mut stack.trees.as_mut().expect("trees by default").boost);
    let novelty = options.novelty.as_mut().expect("novelty step by default");
    light(novelty.trees.as_mut().expect("novelty trees by default"));
    let mut folds_done = 0;
    let report = cross_validate(&data, &options, |_, _| folds_done += 1).unwrap();
    // Three outer folds and, nested for the second stage, one per pair of folds; as many
    // clause classifiers for the second stage's evidence.
    assert_eq!(folds_done, 12);
    assert_eq!(report.first_stage_fits, 6);
    assert_eq!(report.clause_classifier_fits, 6);
    assert_eq!(report.contracts, 30);
    assert_eq!(report.per_category.len(), 41);
    let spans: usize = data.contracts.iter().map(|c| c.annotations.len()).sum();
    assert_eq!(
        report
            .per_category
            .iter()
            .map(|c| c.annotations)
            .sum::<usize>(),
        spans
    );
    assert_eq!(report.held_out_clauses.len(), spans);
    // Even 20 training contracts per fold find the easy categories (Governing Law: 0.94).
    let law = &report.per_category[7];
    assert_eq!(law.category, "Governing Law");
    assert!(law.scores.aupr > 0.5, "{law:?}");
    assert!(
        report.pooled.aupr > 0.2 && report.pooled.aupr < 1.0,
        "{:?}",
        report.pooled
    );
    assert!(report.pooled_one_to_one.aupr <= report.pooled.aupr);
    assert!(report.candidate_recall > 0.9);
    let stage = report
        .second_stage
        .expect("fitted on all out-of-fold logits");
    assert!(stage.positives > 0 && stage.rows > stage.positives);
    // With its novelty step, fitted on the same contracts' selected predictions.
    let novelty = stage.novelty.expect("novelty step on by default");
    assert!(novelty.positives > 0 && novelty.rows > novelty.positives);
}
