//! The learned rankers a process loads once, and which of them serves a library.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use precedent_learn::clause_types::LazyClauseTypes;
use precedent_learn::{ClauseTypeReader, LearnedModel, MIN_LIBRARY_FIT};
use precedent_library::Library;

use crate::EngineError;

/// The learned rankers of a process: a named one, or the default ACORD ranker
/// (`$PRECEDENT_RANKER`, else the shipped `models/acord-ranker`) and the contracts ranker
/// (trained without the rating memory, for libraries nobody rated).
#[derive(Clone, Default)]
pub struct Rankers {
    /// The ranker named by the user (`--model-dir`, `serve --ranker`); it serves every library.
    pub named: Option<Arc<LearnedModel>>,
    /// The default ranker, when none was named and it loads.
    pub default: Option<Arc<LearnedModel>>,
    /// The contracts ranker, when none was named and it loads.
    pub contracts: Option<Arc<LearnedModel>>,
}

impl Rankers {
    /// Loads the named ranker (an error if it does not load), or else the default and
    /// contracts rankers where they are found (a warning if one is found but does not load:
    /// the pipelines without it still work).
    pub fn load(named: Option<&Path>) -> Result<Rankers, EngineError> {
        if let Some(dir) = named {
            let model = LearnedModel::load(dir)?;
            return Ok(Rankers {
                named: Some(Arc::new(model)),
                ..Rankers::default()
            });
        }
        let load_found = |dir: Option<PathBuf>, what: &str| {
            let dir = dir?;
            match LearnedModel::load(&dir) {
                Ok(model) => Some(Arc::new(model)),
                Err(e) => {
                    tracing::warn!("no {what}: {e}");
                    None
                }
            }
        };
        Ok(Rankers {
            named: None,
            default: load_found(precedent_learn::default_model_dir(), "learned ranker"),
            contracts: load_found(
                precedent_learn::default_contracts_model_dir(),
                "contracts ranker",
            ),
        })
    }

    /// The ranker for `library`, and whether it serves it by default. A ranker whose rating
    /// memory holds the library's clauses ([`LearnedModel::library_fit`]), or one trained
    /// without the rating memory (`train --without rating-memory`, which needs no ratings of
    /// the library), serves it by default; any other is offered by name only, since its memory
    /// knows none of these clauses. The named ranker is the only candidate when there is one;
    /// otherwise the default ranker where it fits, else the contracts ranker, else the default
    /// ranker offered by name.
    pub fn for_library(&self, library: &Library) -> (Option<Arc<LearnedModel>>, bool) {
        let fits = |model: &LearnedModel| model.library_fit(library) >= MIN_LIBRARY_FIT;
        if let Some(named) = &self.named {
            let needs_no_ratings = named
                .manifest
                .without
                .iter()
                .any(|group| group == "rating-memory");
            return (Some(named.clone()), needs_no_ratings || fits(named));
        }
        match (&self.default, &self.contracts) {
            (Some(model), _) if fits(model) => (Some(model.clone()), true),
            (_, Some(contracts)) => (Some(contracts.clone()), true),
            (other, None) => (other.clone(), false),
        }
    }
}

/// The CUAD clause-type reader for queries naming a clause type (the `+types` stage and the
/// learned ranker's clause-type rule): the single-clause classifier with
/// `ClassifierOptions::for_acord` (the options the shipped ranker was trained with, which
/// differ from `review`'s in their negatives), trained from the CUAD folder (`dir`, else the one
/// found from the checkout or `PRECEDENT_CUAD_DIR`) on first use and cached in `cache`:
/// pipelines are built before any query, and most queries never need it.
pub fn lazy_clause_type_reader(dir: Option<PathBuf>, cache: PathBuf) -> Arc<LazyClauseTypes> {
    Arc::new(LazyClauseTypes::new(Box::new(move || {
        let dir = dir
            .clone()
            .or_else(precedent_clause_types::cache::find_cuad_dir)
            .ok_or("no CUAD folder found (give --cuad DIR or set PRECEDENT_CUAD_DIR)")?;
        let classifier = precedent_clause_types::cache::load_or_train_classifier(
            &dir,
            &cache,
            &precedent_clause_types::clause_classifier::ClassifierOptions::for_acord(),
            || {
                eprintln!(
                    "training the clause classifier from {} (once; cached in {})",
                    dir.display(),
                    cache.display()
                )
            },
        )
        .map_err(|e| {
            format!(
                "training the clause classifier from {}: {e:#}",
                dir.display()
            )
        })?;
        Ok(Arc::new(classifier) as Arc<dyn ClauseTypeReader>)
    })))
}
