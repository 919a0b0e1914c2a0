//! Progress bars for long work, on stderr, only when someone is watching.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use precedent_library::Progress;

pub struct Bars {
    enabled: bool,
    current: Mutex<Option<ProgressBar>>,
}

impl Bars {
    pub fn new(quiet: bool) -> Self {
        Bars {
            enabled: !quiet && std::io::stderr().is_terminal(),
            current: Mutex::new(None),
        }
    }
}

/// Remarks of engine work: warnings always on stderr, status lines only when bars are drawn.
impl precedent_engine::Report for Bars {
    fn warn(&self, message: &str) {
        eprintln!("{message}");
    }

    /// A one-line status message (e.g. "fold 2/5: features").
    fn note(&self, message: &str) {
        if self.enabled {
            eprintln!("{message}");
        }
    }
}

impl Progress for Bars {
    fn start(&self, stage: &str, total: u64) {
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style =
            ProgressStyle::with_template("{msg:<28} [{bar:32}] {pos}/{len} ({per_sec}, eta {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(stage.to_owned());
        if let Ok(mut current) = self.current.lock() {
            *current = Some(bar);
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(current) = self.current.lock() {
            if let Some(bar) = current.as_ref() {
                bar.inc(n);
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut current) = self.current.lock() {
            if let Some(bar) = current.take() {
                bar.finish_and_clear();
            }
        }
    }
}
