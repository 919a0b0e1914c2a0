//! Comparing texts and writing Word documents, with no knowledge of libraries or models.
//!
//! - [`compare`]: the word-level comparison every face shows (the API's `/v1/compare`, the
//!   page's compare tab, `precedent compare`);
//! - [`redline`]: that comparison as a DOCX of tracked changes (`w:ins` / `w:del`);
//! - [`docx`]: the minimal DOCX writer both the redline and the engine's review report use.
//!
//! Why a crate of its own: it depends on nothing of the engine, and the engine, the CLI and
//! the server all reach it, so it sits below them with the other formats.

pub mod compare;
pub mod docx;
pub mod redline;
