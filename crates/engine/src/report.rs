//! How long engine work speaks to whoever runs it.
//!
//! Why a trait: the work (building an evaluation library, cross-validating a ranker) knows
//! what is worth saying, but not where it goes. The CLI draws progress bars and prints on
//! stderr; a test or another face may say nothing at all ([`Silent`]).

use precedent_library::Progress;

/// Progress bars plus the two kinds of remark long work makes.
pub trait Report: Progress {
    /// A remark the user must see whether or not bars are drawn: a warning, a rebuild, a
    /// wait. The CLI prints it on stderr as it is (with its own `warning: ` where it has one).
    fn warn(&self, message: &str);
    /// A status line for someone watching (e.g. "fold 2/5: features"); a face without bars
    /// may drop it.
    fn note(&self, message: &str);
}

/// A report that says nothing and draws nothing.
pub struct Silent;

impl Progress for Silent {}

impl Report for Silent {
    fn warn(&self, _message: &str) {}
    fn note(&self, _message: &str) {}
}
