//! A one-line progress indicator on stderr, only on a terminal and only for runs that last.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::runtime::sync::lock;

/// Shows `checking… done/total targets` after a delay; erases itself when finished.
pub struct ProgressLine {
    out: Option<Mutex<Box<dyn Write + Send>>>,
    start: Instant,
    delay: Duration,
    shown: Mutex<bool>,
}

/// How long a run must last before progress appears.
pub const DELAY: Duration = Duration::from_millis(300);

impl ProgressLine {
    /// On stderr, enabled only when `wanted` (not `--quiet`, not `TERM=dumb`) and stderr is a
    /// terminal.
    pub fn stderr(wanted: bool) -> ProgressLine {
        let out: Option<Box<dyn Write + Send>> = if wanted && std::io::stderr().is_terminal() {
            Some(Box::new(std::io::stderr()))
        } else {
            None
        };
        ProgressLine::to(out, DELAY)
    }

    /// On `out` (disabled when `None`), appearing after `delay`.
    pub fn to(out: Option<Box<dyn Write + Send>>, delay: Duration) -> ProgressLine {
        ProgressLine {
            out: out.map(Mutex::new),
            start: Instant::now(),
            delay,
            shown: Mutex::new(false),
        }
    }

    /// Updates the line.
    pub fn update(&self, done: usize, total: usize) {
        let Some(out) = &self.out else { return };
        if self.start.elapsed() < self.delay {
            return;
        }
        let mut shown = lock(&self.shown);
        *shown = true;
        let mut out = lock(out);
        let _ = write!(out, "\r\x1b[2Kchecking… {done}/{total} targets");
        let _ = out.flush();
    }

    /// Erases the line if it was shown.
    pub fn finish(&self) {
        let Some(out) = &self.out else { return };
        if *lock(&self.shown) {
            let mut out = lock(out);
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn text(s: &Sink) -> String {
        String::from_utf8_lossy(&lock(&s.0)).into_owned()
    }

    #[test]
    fn quiet_before_the_delay_and_when_disabled() {
        let sink = Sink::default();
        let p = ProgressLine::to(Some(Box::new(sink.clone())), Duration::from_secs(3600));
        p.update(1, 2);
        p.finish();
        assert!(text(&sink).is_empty());
        let p = ProgressLine::to(None, Duration::ZERO);
        p.update(1, 2);
        p.finish();
    }

    #[test]
    fn shows_counts_then_erases_the_line() {
        let sink = Sink::default();
        let p = ProgressLine::to(Some(Box::new(sink.clone())), Duration::ZERO);
        p.update(3, 10);
        p.finish();
        let t = text(&sink);
        assert!(t.contains("3/10 targets"), "{t}");
        assert!(t.ends_with("\r\x1b[2K"), "{t:?}");
    }
}
