//! CUAD (Contract Understanding Atticus Dataset) and LegalBench's CUAD tasks for Precedent:
//! reading the annotated contracts, their 41 categories and the placement of their spans in the
//! contract text, and reading LegalBench's yes/no tasks. What learns from them is
//! `precedent_clause_types`; what scores it is `precedent_eval`.

pub mod categories;
pub mod dataset;
pub mod legalbench;
pub mod place;
mod pylist;

pub use categories::{
    category_index, clause_type, is_clause_type, named_in_query, substring_ok, ClauseTypeError,
    CATEGORIES, NOT_CLAUSE_TYPES,
};
pub use dataset::{load, Annotation, CuadContract, CuadDataset, CuadError, PlacementReport};
pub use place::Placement;
pub use pylist::parse_string_list;
