//! The clause-typing models review, ingest, classify and LegalBench read, and where they come
//! from: a model file, else the cached model trained from the CUAD folder (trained on first use,
//! about a minute, and cached). `precedent review`, `ingest`, `classify`, `eval-legalbench` and
//! `precedent serve` all load them here, so that the server reviews with the very models the
//! command line does.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use precedent_clause_types::cache::{
    find_cuad_dir, load_or_train, load_or_train_classifier, load_or_train_classifier_with_view,
};
use precedent_clause_types::clause_classifier::{ClassifierOptions, ClauseClassifier};
use precedent_clause_types::dense::{SentenceEmbedder, SENTENCE_MAX_TOKENS};
use precedent_clause_types::{ClauseTyper, TrainOptions};
use precedent_models::{EmbedOptions, Embedder};

/// Where the clause typer and the single-clause classifier its second stage reads come from.
/// Clones share the loaded second-stage classifier (a server's review typer and its classify
/// gate read the same 44 MB model, loaded once).
#[derive(Clone)]
pub struct ClauseModels {
    /// A typer model file; by default the cached model trained from `cuad`.
    pub typer: Option<PathBuf>,
    /// CUAD folder to train from (master_clauses.csv, full_contract_txt/); by default the one
    /// found from the checkout or `PRECEDENT_CUAD_DIR`.
    pub cuad: Option<PathBuf>,
    /// Cache directory for trained typers.
    pub typer_cache: PathBuf,
    /// A single-clause classifier model file; by default the cached model trained from `cuad`.
    pub classifier: Option<PathBuf>,
    /// Cache directory for trained clause classifiers.
    pub classifier_cache: PathBuf,
    second_stage: SharedClassifier,
}

impl ClauseModels {
    pub fn new(
        typer: Option<PathBuf>,
        cuad: Option<PathBuf>,
        typer_cache: PathBuf,
        classifier: Option<PathBuf>,
        classifier_cache: PathBuf,
    ) -> ClauseModels {
        ClauseModels {
            typer,
            cuad,
            typer_cache,
            classifier,
            classifier_cache,
            second_stage: SharedClassifier::default(),
        }
    }
}

/// A model loaded at most once across clones ([`ClauseModels::second_stage_classifier`]). A failed
/// load is not remembered: the next caller tries again and gets its own error.
#[derive(Clone, Default)]
struct SharedClassifier(Arc<std::sync::Mutex<Option<Arc<ClauseClassifier>>>>);

/// MiniLM as the typer's sentence embedder: the sentence-embedding view of `review` (and of
/// `eval-cuad --dense`).
pub struct MiniLmSentences(pub Embedder);

impl SentenceEmbedder for MiniLmSentences {
    fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let options = EmbedOptions {
            max_tokens: Some(SENTENCE_MAX_TOKENS),
            ..EmbedOptions::default()
        };
        Ok(self.0.embed_with(texts, &options, &|_| {})?)
    }

    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn model_id(&self) -> &str {
        self.0.model_id()
    }
}

impl ClauseModels {
    /// The typer with the clause classifier its second stage reads: word features only (what
    /// `ingest` types clauses with, and `review --fast`).
    pub fn load(&self) -> Result<ClauseTyper> {
        let classifier = self.second_stage_classifier()?;
        Ok(self
            .load_first_stage()?
            .with_clause_classifier(Some(classifier)))
    }

    /// The typer a review uses: [`Self::load`] plus, unless `fast`, the sentence-embedding
    /// view (MiniLM over every sentence of the contract; ~1.5 s more for a median CUAD
    /// contract). Without MiniLM the review goes on with word features, saying so once.
    pub fn load_for_review(&self, fast: bool) -> Result<ClauseTyper> {
        let mut typer = self.load()?;
        if fast {
            return Ok(typer);
        }
        let attached = Embedder::load_default()
            .map_err(anyhow::Error::from)
            .and_then(|e| typer.set_sentence_embedder(Arc::new(MiniLmSentences(e))));
        if let Err(e) = attached {
            eprintln!(
                "warning: reviewing with word features only (as --fast): the sentence-embedding view is unavailable: {e:#}"
            );
        }
        Ok(typer)
    }

    fn cuad_dir(&self, what: &str, flag: &str) -> Result<PathBuf> {
        match &self.cuad {
            Some(d) => Ok(d.clone()),
            None => find_cuad_dir().with_context(|| {
                format!("no CUAD data to train the {what} from: pass --cuad DIR or {flag} FILE")
            }),
        }
    }

    /// The single-clause classifier: --classifier, else the cached one trained from --cuad
    /// with `options`.
    pub fn load_classifier(&self, options: &ClassifierOptions) -> Result<ClauseClassifier> {
        if let Some(path) = &self.classifier {
            return ClauseClassifier::load(path);
        }
        let dir = self.cuad_dir("clause classifier", "--classifier")?;
        load_or_train_classifier(&dir, &self.classifier_cache, options, || {
            eprintln!(
                "training the clause classifier from {} (once; cached in {})",
                dir.display(),
                self.classifier_cache.display()
            )
        })
        .with_context(|| format!("training the clause classifier from {}", dir.display()))
    }

    /// These models with another single-clause classifier file: a clone that does not share the
    /// loaded second-stage classifier, which came from the other one.
    pub fn with_classifier(&self, classifier: Option<PathBuf>) -> ClauseModels {
        ClauseModels {
            classifier,
            second_stage: SharedClassifier::default(),
            ..self.clone()
        }
    }

    /// The classifier the typer's second stage reads ([`Self::load_classifier`] with
    /// [`ClassifierOptions::for_second_stage`]), loaded once for these models and their
    /// clones. The lock is held while loading (or training, the first time), so concurrent first
    /// users wait for one load instead of each loading a copy.
    pub fn second_stage_classifier(&self) -> Result<Arc<ClauseClassifier>> {
        let mut slot = self
            .second_stage
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(model) = slot.as_ref() {
            return Ok(model.clone());
        }
        let model = Arc::new(self.load_classifier(&ClassifierOptions::for_second_stage())?);
        *slot = Some(model.clone());
        Ok(model)
    }

    /// Attaches the type gate to the classify `model`: the second stage's classifier
    /// ([`Self::second_stage_classifier`]), whose agreement a type needs to be marked likely.
    /// When it cannot be loaded (a classify model passed as a file needs no CUAD data, the gate
    /// does when not cached), says why and goes on without it.
    pub fn attach_type_gate(&self, model: &mut ClauseClassifier) -> Result<()> {
        match self.second_stage_classifier() {
            Ok(gate) => model.set_type_gate(gate),
            Err(e) => {
                eprintln!(
                    "warning: no type gate ({e:#}); types at 0.5 and up are marked likely without it"
                );
                Ok(())
            }
        }
    }

    /// The classifier `eval-legalbench` answers with: --classifier (with MiniLM attached when
    /// the file has a sentence view), else the cached one of
    /// [`ClassifierOptions::for_legalbench`], words plus the MiniLM view. With `words_only`, or
    /// without MiniLM (saying so), the words-only one ([`ClassifierOptions::default`]).
    pub fn load_legalbench_classifier(&self, words_only: bool) -> Result<ClauseClassifier> {
        if let Some(path) = &self.classifier {
            let mut model = ClauseClassifier::load(path)?;
            if model.has_view() {
                let embedder = Embedder::load_default().with_context(|| {
                    format!(
                        "{} reads sentence embeddings, and MiniLM is unavailable",
                        path.display()
                    )
                })?;
                model.set_sentence_embedder(Arc::new(MiniLmSentences(embedder)))?;
            }
            return Ok(model);
        }
        let (options, embedder) = legalbench_options(words_only);
        let dir = self.cuad_dir("clause classifier", "--classifier")?;
        load_or_train_classifier_with_view(&dir, &self.classifier_cache, &options, embedder, || {
            eprintln!(
                "training the clause classifier from {} (once, about {}; cached in {})",
                dir.display(),
                if options.reads_vectors() {
                    "3 minutes with MiniLM"
                } else {
                    "a minute"
                },
                self.classifier_cache.display()
            )
        })
        .with_context(|| format!("training the clause classifier from {}", dir.display()))
    }

    /// The classifier `classify` and `/v1/classify` answer with: the LegalBench classifier of
    /// `classify_model` (else the cached one, [`Self::load_legalbench_classifier`]), with the
    /// type gate of these models' second-stage classifier unless `gated` is false.
    pub fn load_classify(
        &self,
        classify_model: Option<PathBuf>,
        words_only: bool,
        gated: bool,
    ) -> Result<ClauseClassifier> {
        let mut model = self
            .with_classifier(classify_model)
            .load_legalbench_classifier(words_only)?;
        if gated {
            self.attach_type_gate(&mut model)?;
        }
        Ok(model)
    }

    /// The typer without the clause classifier: first-stage confidences only (what a clause
    /// on its own gets anyway, [`ClauseTyper::classify_scores`]).
    pub fn load_first_stage(&self) -> Result<ClauseTyper> {
        if let Some(path) = &self.typer {
            return ClauseTyper::load(path);
        }
        let dir = self.cuad_dir("clause typer", "--typer")?;
        load_or_train(&dir, &self.typer_cache, &TrainOptions::default(), || {
            eprintln!(
                "training the clause typer from {} (once; cached in {})",
                dir.display(),
                self.typer_cache.display()
            )
        })
        .with_context(|| format!("training the clause typer from {}", dir.display()))
    }
}

/// The LegalBench classifier's options and the MiniLM embedder its view reads, or the word-only
/// options when asked (`words_only`) or (with a warning) when MiniLM cannot be loaded.
pub fn legalbench_options(
    words_only: bool,
) -> (ClassifierOptions, Option<Arc<dyn SentenceEmbedder>>) {
    if words_only {
        return (ClassifierOptions::default(), None);
    }
    match Embedder::load_default() {
        Ok(e) => (
            ClassifierOptions::for_legalbench(),
            Some(Arc::new(MiniLmSentences(e))),
        ),
        Err(e) => {
            eprintln!(
                "warning: classifying with word features only: the sentence-embedding view is unavailable: {e}"
            );
            (ClassifierOptions::default(), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use precedent_clause_types::clause_classifier::{LabelledClause, ALL_KNOWN};

    /// A words-only classifier trained on a dozen toy clauses of two types, saved to `path`.
    fn save_toy_classifier(path: &Path) {
        let examples: Vec<LabelledClause> = (0..12)
            .flat_map(|g| {
                [
                    (
                        format!("This Agreement is governed by the laws of State {g}."),
                        7,
                    ),
                    (
                        format!("Neither party may assign this Agreement, clause {g}."),
                        18,
                    ),
                ]
                .map(|(text, category)| LabelledClause {
                    text,
                    positive: 1 << category,
                    known: ALL_KNOWN,
                    group: g,
                })
            })
            .collect();
        ClauseClassifier::train(&examples, &ClassifierOptions::default(), "toy")
            .and_then(|model| model.save(path))
            .expect("toy classifier");
    }

    #[test]
    fn clones_load_the_second_stage_classifier_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("toy.bin");
        let args = ClauseModels::new(
            None,
            None,
            dir.path().join("typer"),
            Some(path.clone()),
            dir.path().join("classifier"),
        );
        // A failed load is not remembered: once the file exists, the next call loads it.
        assert!(args.clone().second_stage_classifier().is_err());
        save_toy_classifier(&path);
        let first = args.second_stage_classifier().expect("load");
        let again = args.clone().second_stage_classifier().expect("shared");
        assert!(Arc::ptr_eq(&first, &again), "a clone loaded its own copy");
        // Arguments naming another classifier do not get this one.
        let other = args.with_classifier(Some(path)).second_stage_classifier();
        assert!(!Arc::ptr_eq(&first, &other.expect("load")));
        // The gate attached to a classify model is that model too (it has no gate of its own).
        let mut model = ClauseClassifier::load(&dir.path().join("toy.bin")).expect("load");
        args.attach_type_gate(&mut model).expect("gate");
        assert!(model.has_type_gate() && !first.has_type_gate());
    }
}
