//! CUAD (Contract Understanding Atticus Dataset) for Precedent: reading the annotated contracts,
//! placing their spans, the 41-category clause typer, and the CUAD and LegalBench evaluations.

pub mod boost;
pub mod cache;
pub mod candidates;
pub mod categories;
pub mod clause_classifier;
pub mod dataset;
pub mod dense;
pub mod eval;
pub mod features;
pub mod labels;
pub mod legalbench;
pub mod model_file;
pub mod novelty;
pub mod place;
mod pylist;
pub mod sections;
pub mod stack;
pub mod type_thresholds;
pub mod typer;

pub use categories::{
    category_index, clause_type, is_clause_type, named_in_query, substring_ok, ClauseTypeError,
    CATEGORIES, NOT_CLAUSE_TYPES,
};
pub use dataset::{load, Annotation, CuadContract, CuadDataset, CuadError, PlacementReport};
pub use place::Placement;
pub use pylist::parse_string_list;
pub use typer::{ClauseTyper, ScoredCandidate, TrainOptions, N_CATEGORIES};
