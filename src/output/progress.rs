//! A one-line progress indicator on stderr, only on a terminal and only for runs that last.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Shows `checking… done/total` after a delay; erases itself when finished.
pub struct Progress {
    enabled: bool,
    start: Instant,
    shown: Mutex<bool>,
}

/// How long a run must last before progress appears.
const DELAY: Duration = Duration::from_millis(300);

impl Progress {
    /// Enabled only when stderr is a terminal.
    pub fn new() -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            start: Instant::now(),
            shown: Mutex::new(false),
        }
    }

    /// Updates the line.
    pub fn update(&self, done: usize, total: usize) {
        if !self.enabled || self.start.elapsed() < DELAY {
            return;
        }
        let mut shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        *shown = true;
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2Kchecking… {done}/{total} targets");
        let _ = err.flush();
    }

    /// Erases the line if it was shown.
    pub fn finish(&self) {
        let shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        if *shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}
