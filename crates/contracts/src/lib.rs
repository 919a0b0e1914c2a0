//! Contracts as files: reading them ([`read_path`]), cutting them into clauses ([`segment`]),
//! attaching cross-referenced text ([`xref`]) and extracting contract metadata ([`meta`]).
//!
//! Everything here works on one [`Document`] at a time and knows nothing of retrieval; the
//! library and the CLI build on it.

pub mod library_docs;
pub mod meta;
pub mod read;
pub mod segment;
pub mod xref;

pub use meta::ContractMeta;
pub use read::{
    ocr_available, read_bytes, read_draft, read_file, read_path, read_path_with, Document, Format,
    ReadError, ReadOptions,
};
pub use segment::{segment, segment_text, Clause};
