//! CUAD (Contract Understanding Atticus Dataset) for Precedent: reading the annotated contracts,
//! placing their spans, the 41-category clause typer, and the CUAD and LegalBench evaluations.

pub mod categories;
pub mod dataset;
pub mod place;
mod pylist;

pub use categories::{category_index, substring_ok, CATEGORIES};
pub use dataset::{load, Annotation, CuadContract, CuadDataset, CuadError, PlacementReport};
pub use place::Placement;
pub use pylist::parse_string_list;
