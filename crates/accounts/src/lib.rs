//! A library's users and their feedback, kept as files beside the library:
//!
//! - [`keys`]: API keys (bearer tokens, one library and one role each), stored only as hashes;
//! - [`ratings`]: lawyers' star ratings in an append-only, fsynced JSONL log, exported as
//!   ACORD-style qrels, queries and corpus so `precedent train` can learn from real use.
//!
//! Why a crate of its own: neither needs a library's models or pipelines (only the library's
//! atomic file write), and both must survive a
//! crash on their own terms (atomic key file, torn-line recovery of the log).

pub mod keys;
pub mod ratings;
