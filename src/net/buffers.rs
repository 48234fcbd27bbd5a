//! The buffers of one connection, allocated once.
//!
//! ureq's `LazyBuffers` re-grows its input buffer with a zero-filling `resize` on the way to
//! every read; in the size-optimised build that byte loop was 38 % of a passive `ping mcp`'s
//! instructions (callgrind). These are allocated zeroed once (`calloc`) and reused: the input
//! is a window `start..end` that moves back to the front when consumed.

use ureq::unversioned::transport::Buffers;

/// Room a request body is read into before it is written (ureq's own minimum).
const MIN_TMP: usize = 10 * 1024;

/// Input and output buffers of one connection.
#[derive(Debug)]
pub(crate) struct ConnBuffers {
    input_size: usize,
    output_size: usize,
    input: Vec<u8>,
    start: usize,
    end: usize,
    output: Vec<u8>,
    progress: bool,
}

impl ConnBuffers {
    pub(crate) fn new(input_size: usize, output_size: usize) -> ConnBuffers {
        ConnBuffers {
            input_size: input_size.max(1),
            output_size: output_size.max(1),
            input: Vec::new(),
            start: 0,
            end: 0,
            output: Vec::new(),
            progress: false,
        }
    }

    fn allocate(&mut self) {
        if self.input.is_empty() {
            self.input = vec![0; self.input_size];
        }
        if self.output.is_empty() {
            self.output = vec![0; self.output_size];
        }
    }

    /// Moves the unconsumed input to the front, so the free space is all at the end.
    fn compact(&mut self) {
        if self.start > 0 {
            self.input.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
    }
}

impl Buffers for ConnBuffers {
    fn output(&mut self) -> &mut [u8] {
        self.allocate();
        &mut self.output
    }

    fn input(&self) -> &[u8] {
        self.input.get(self.start..self.end).unwrap_or_default()
    }

    fn input_append_buf(&mut self) -> &mut [u8] {
        self.allocate();
        self.compact();
        self.input.get_mut(self.end..).unwrap_or_default()
    }

    fn input_appended(&mut self, amount: usize) {
        self.end = self.end.saturating_add(amount).min(self.input.len());
    }

    fn input_consume(&mut self, amount: usize) {
        self.progress = amount > 0;
        self.start = self.start.saturating_add(amount).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    fn tmp_and_output(&mut self) -> (&mut [u8], &mut [u8]) {
        self.allocate();
        self.compact();
        if self.input.len() - self.end < MIN_TMP {
            self.input.resize(self.end + MIN_TMP, 0);
        }
        let tmp = self.input.get_mut(self.end..).unwrap_or_default();
        (tmp, &mut self.output)
    }

    fn can_use_input(&self) -> bool {
        self.start < self.end && self.progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_a_window_that_returns_to_the_front() {
        let mut b = ConnBuffers::new(8, 4);
        b.input_append_buf()[..5].copy_from_slice(b"hello");
        b.input_appended(5);
        assert_eq!(b.input(), b"hello");
        b.input_consume(2);
        assert_eq!(b.input(), b"llo");
        assert!(b.can_use_input());
        assert_eq!(b.input_append_buf().len(), 5, "compacted: 3 used of 8");
        assert_eq!(b.input(), b"llo");
        b.input_consume(3);
        assert_eq!(b.input(), b"");
        assert!(!b.can_use_input());
        let (tmp, out) = b.tmp_and_output();
        assert!(tmp.len() >= MIN_TMP && out.len() == 4);
    }
}
