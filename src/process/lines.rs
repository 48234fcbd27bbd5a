//! The child's stdio as bounded, newline-framed messages: stdout in as lines, stdin out as
//! lines, stderr thrown away.
//!
//! One helper thread per child moves stdout into a bounded channel in chunks of at most
//! [`CHUNK_BYTES`] and drains stderr, both under one `poll`; [`Lines`] frames those bytes
//! and waits on the channel with the attempt's timeout, so a silent child cannot hold a
//! reader past its deadline. At most
//! [`CHANNEL_CHUNKS`] chunks wait in the channel and at most one line of
//! [`MAX_LINE_BYTES`] (plus one chunk) is buffered, so a child that writes without end
//! cannot grow our memory: the pipe fills and the child waits. [`Input`] writes to a
//! non-blocking pipe and `poll`s for room, so a child that never reads cannot hold a writer
//! past its deadline either.
//!
//! This module knows nothing of the child's lifetime: it says why it stopped ([`Stop`],
//! [`WriteError`]) and the [`Child`](super::Child) turns that into the public errors, adding
//! the exit status where output ended.

use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::runtime::threads;
use crate::runtime::{Attempt, Deadline};

/// The longest line [`Child::recv_line`](super::Child::recv_line) returns, in bytes, not
/// counting its `\n`.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Bytes the reader thread reads from stdout at once (one channel message at most).
pub(crate) const CHUNK_BYTES: usize = 64 * 1024;

/// Chunks the stdout channel holds before the reader thread waits (back-pressure).
pub(crate) const CHANNEL_CHUNKS: usize = 4;

/// What the helper thread sends.
enum Message {
    Data(Vec<u8>),
    Eof,
    Error(io::Error),
    /// Sent by an abort handle to wake a waiting reader.
    Wake,
}

/// Why [`Lines::recv`] returned no line.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The attempt's deadline passed first.
    Timeout,
    /// The attempt was aborted, or the group killed, before the deadline.
    Aborted,
    /// A line exceeded [`MAX_LINE_BYTES`]; later calls skip the rest of it.
    TooLong,
    /// Stdout reached end of file; `unterminated` bytes of a last line were discarded.
    Closed { unterminated: usize },
    /// Reading stdout failed (the stream is then treated as closed).
    Io(io::Error),
}

/// The stdout side: the channel from the reader thread and the line buffer.
pub(crate) struct Lines {
    events: Receiver<Message>,
    wake: SyncSender<Message>,
    framer: Framer,
    /// Stdout reached its end (or failed).
    eof: bool,
}

/// The sending half of the stdout channel, until the reader thread takes it.
pub(crate) struct Feed(SyncSender<Message>);

/// Wakes a [`Lines::recv`] that waits on the channel, so it sees an abort at once.
pub(crate) struct Waker(SyncSender<Message>);

/// A new stdout channel: the receiving [`Lines`] and the [`Feed`] that
/// [`Feed::start`] hands to the reader thread.
pub(crate) fn channel() -> (Lines, Feed) {
    let (tx, events) = sync_channel(CHANNEL_CHUNKS);
    let lines = Lines {
        events,
        wake: tx.clone(),
        framer: Framer::default(),
        eof: false,
    };
    (lines, Feed(tx))
}

impl Feed {
    /// Starts the one helper thread of a child: it forwards stdout and drains stderr.
    pub(crate) fn start(self, stdout: ChildStdout, stderr: ChildStderr) -> io::Result<()> {
        let tx = self.0;
        threads::spawn("stdio", threads::SMALL_STACK, move || {
            pump(stdout, stderr, tx)
        })
    }
}

impl Waker {
    /// Best effort: a full channel already wakes the reader, and a gone one has none.
    pub(crate) fn wake(&self) {
        match self.0.try_send(Message::Wake) {
            Ok(()) | Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

impl Lines {
    /// A waker for this channel (for the abort handle).
    pub(crate) fn waker(&self) -> Waker {
        Waker(self.wake.clone())
    }

    /// The next line of stdout, without its `\n` (see
    /// [`Child::recv_line`](super::Child::recv_line), which this implements but for the exit
    /// status). `killed` tells whether the group was killed through the abort handle; it is
    /// asked again whenever the wait is woken.
    pub(crate) fn recv(
        &mut self,
        attempt: &Attempt,
        killed: &dyn Fn() -> bool,
    ) -> Result<Vec<u8>, Stop> {
        loop {
            if killed() || attempt.is_aborted() {
                return Err(if attempt.ends().passed() {
                    Stop::Timeout
                } else {
                    Stop::Aborted
                });
            }
            if self.framer.has_pending() {
                attempt.mark_response();
            }
            if let Some(result) = self.framer.take_line() {
                return result.map_err(|LineTooLong| Stop::TooLong);
            }
            if self.eof {
                let unterminated = self.framer.discard_pending();
                return Err(Stop::Closed { unterminated });
            }
            let left = attempt.remaining();
            if left.is_zero() {
                return Err(Stop::Timeout);
            }
            match self.events.recv_timeout(left) {
                Ok(Message::Data(bytes)) => {
                    attempt.mark_response();
                    self.framer.append(&bytes);
                }
                Ok(Message::Eof) | Err(RecvTimeoutError::Disconnected) => self.eof = true,
                Ok(Message::Error(e)) => {
                    self.eof = true;
                    return Err(Stop::Io(e));
                }
                Ok(Message::Wake) => {}
                Err(RecvTimeoutError::Timeout) => return Err(Stop::Timeout),
            }
        }
    }

    /// The line buffer's allocation, for tests of the memory bound.
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.framer.buf.capacity()
    }
}

/// A line over [`MAX_LINE_BYTES`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LineTooLong;

/// Splits received bytes into lines of at most `MAX` bytes, remembering how far it looked,
/// and skips over-long lines without keeping them. `MAX` is [`MAX_LINE_BYTES`] but where the
/// fuzz target (`agenthealth::fuzzing::lines`) needs a bound short inputs can cross.
#[derive(Default)]
pub(crate) struct Framer<const MAX: usize = MAX_LINE_BYTES> {
    /// Received stdout bytes; the unconsumed part starts at `start`.
    buf: Vec<u8>,
    start: usize,
    /// Bytes after `start` known to hold no `\n`.
    scanned: usize,
    /// Skipping the remainder of an over-long line.
    skipping: bool,
}

impl<const MAX: usize> Framer<MAX> {
    /// Whether received bytes wait to be framed.
    pub(crate) fn has_pending(&self) -> bool {
        self.buf.len() > self.start
    }

    /// Drops what is buffered (at the end of the output) and returns how many bytes that was.
    pub(crate) fn discard_pending(&mut self) -> usize {
        let pending = self.buf.len() - self.start;
        self.buf = Vec::new();
        self.start = 0;
        self.scanned = 0;
        pending
    }

    /// Adds received bytes to the buffer, compacting it first.
    pub(crate) fn append(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// A complete line, an over-long line, or `None` when more bytes are needed.
    pub(crate) fn take_line(&mut self) -> Option<Result<Vec<u8>, LineTooLong>> {
        loop {
            let pending = &self.buf[self.start..];
            let newline = pending[self.scanned..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| self.scanned + i);
            match newline {
                Some(end) if self.skipping => {
                    self.skipping = false;
                    self.start += end + 1;
                    self.scanned = 0;
                }
                Some(end) => {
                    let line = (end <= MAX).then(|| pending[..end].to_vec());
                    self.start += end + 1;
                    self.scanned = 0;
                    if self.start == self.buf.len() {
                        self.buf.clear();
                        self.start = 0;
                    }
                    return Some(line.ok_or(LineTooLong));
                }
                None if self.skipping => {
                    self.buf = Vec::new();
                    self.start = 0;
                    self.scanned = 0;
                    return None;
                }
                None if pending.len() > MAX => {
                    self.skipping = true;
                    self.buf = Vec::new();
                    self.start = 0;
                    self.scanned = 0;
                    return Some(Err(LineTooLong));
                }
                None => {
                    self.scanned = pending.len();
                    return None;
                }
            }
        }
    }

    /// Bytes held: the unconsumed ones and those consumed but not yet compacted away.
    pub(crate) fn held(&self) -> usize {
        self.buf.len()
    }
}

/// How long the helper waits for room in the channel before draining stderr again.
const RETRY_SEND: Duration = Duration::from_millis(10);

/// The child's one helper thread: forwards stdout in chunks until end of file, an error, or
/// the receiver is gone, and reads and discards stderr meanwhile, both under one `poll`.
/// While the channel is full (nobody is waiting for a line), stdout is left in its pipe —
/// the back-pressure that bounds our memory — but stderr keeps being drained, so a child
/// that logs never blocks on it. Ends when both streams have ended.
fn pump(mut stdout: ChildStdout, mut stderr: ChildStderr, tx: SyncSender<Message>) {
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut discard = [0u8; 8 * 1024];
    let (mut out_open, mut err_open) = (true, true);
    // A stdout event waiting for room in the channel.
    let mut pending: Option<Message> = None;
    loop {
        if let Some(event) = pending.take() {
            match tx.try_send(event) {
                Ok(()) => {}
                Err(TrySendError::Full(event)) => pending = Some(event),
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
        if !out_open && !err_open {
            if let Some(event) = pending {
                let _ = tx.send(event);
            }
            return;
        }
        let read_out = out_open && pending.is_none();
        let (out_ready, err_ready) = {
            let mut fds = Vec::with_capacity(2);
            if read_out {
                fds.push(PollFd::new(stdout.as_fd(), PollFlags::POLLIN));
            }
            if err_open {
                fds.push(PollFd::new(stderr.as_fd(), PollFlags::POLLIN));
            }
            let timeout = if pending.is_some() {
                PollTimeout::from(u16::try_from(RETRY_SEND.as_millis()).unwrap_or(10))
            } else {
                PollTimeout::NONE
            };
            match poll(&mut fds, timeout) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => return,
            }
            let ready =
                |fd: Option<&PollFd>| fd.and_then(PollFd::revents).is_some_and(|r| !r.is_empty());
            let out = if read_out { ready(fds.first()) } else { false };
            let err = if err_open {
                ready(fds.get(usize::from(read_out)))
            } else {
                false
            };
            (out, err)
        };
        if out_ready {
            match stdout.read(&mut chunk) {
                Ok(0) => {
                    pending = Some(Message::Eof);
                    out_open = false;
                }
                Ok(n) => pending = Some(Message::Data(chunk[..n].to_vec())),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    pending = Some(Message::Error(e));
                    out_open = false;
                }
            }
        }
        if err_ready {
            match stderr.read(&mut discard) {
                Ok(0) => err_open = false,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => err_open = false,
            }
        }
    }
}

/// Why [`Input::write_line`] failed.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// Stdin is closed (by the child, by us, or after a partial write).
    Closed,
    /// The deadline passed before the whole line was written.
    Timeout,
    /// Another write error.
    Io(io::Error),
}

/// The stdin side: a non-blocking pipe, closed for good once its framing is in doubt.
pub(crate) struct Input {
    stdin: Option<ChildStdin>,
}

impl Input {
    /// The child's stdin (`None` when the pipe is missing: every write is then `Closed`).
    pub(crate) fn new(stdin: Option<ChildStdin>) -> Input {
        Input { stdin }
    }

    /// Makes our end of the pipe non-blocking, so [`Input::write_line`] can wait with
    /// `poll` instead of blocking in `write`.
    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        let Some(stdin) = &self.stdin else {
            return Err(io::Error::other("missing pipe"));
        };
        let flags = fcntl(stdin, FcntlArg::F_GETFL).map_err(io::Error::from)?;
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        fcntl(stdin, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
        Ok(())
    }

    /// Closes stdin (the child sees end of file).
    pub(crate) fn close(&mut self) {
        self.stdin = None;
    }

    /// Writes `line` (which holds no `\n`; the caller checks) and a `\n`, giving up at
    /// `deadline`. A deadline already past writes nothing. Any failure after part of the
    /// message went out closes stdin, since the stream is no longer framed.
    pub(crate) fn write_line(&mut self, line: &[u8], deadline: Deadline) -> Result<(), WriteError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(WriteError::Closed);
        };
        if deadline.passed() {
            return Err(WriteError::Timeout);
        }
        let mut message = Vec::with_capacity(line.len() + 1);
        message.extend_from_slice(line);
        message.push(b'\n');
        let mut written = 0;
        let result = loop {
            if written == message.len() {
                break Ok(());
            }
            match stdin.write(&message[written..]) {
                Ok(0) => break Err(WriteError::Closed),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break Err(WriteError::Closed),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.remaining();
                    if left.is_zero() {
                        break Err(WriteError::Timeout);
                    }
                    if let Err(e) = wait_writable(stdin, left) {
                        break Err(WriteError::Io(e));
                    }
                }
                Err(e) => break Err(WriteError::Io(e)),
            }
        };
        match &result {
            Ok(()) => {}
            // Nothing written: the stream is still framed.
            Err(WriteError::Timeout) if written == 0 => {}
            Err(_) => self.stdin = None,
        }
        result
    }
}

/// Waits until stdin can take more bytes (or is broken), for at most `left`.
fn wait_writable(stdin: &ChildStdin, left: Duration) -> io::Result<()> {
    // Round up so a sub-millisecond remainder does not spin.
    let ms = left.as_millis().saturating_add(1);
    let timeout = PollTimeout::from(u16::try_from(ms).unwrap_or(u16::MAX));
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLOUT)];
    match poll(&mut fds, timeout) {
        Ok(_) | Err(Errno::EINTR) => Ok(()),
        Err(e) => Err(io::Error::from(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(framer: &mut Framer) -> Option<Vec<u8>> {
        framer.take_line().and_then(Result::ok)
    }

    #[test]
    fn framing_splits_joins_and_bounds_lines() {
        let mut framer = Framer::default();
        framer.append(b"a\nb");
        assert_eq!(line(&mut framer), Some(b"a".to_vec()));
        assert!(framer.take_line().is_none());
        framer.append(b"c\r\n\n");
        assert_eq!(line(&mut framer), Some(b"bc\r".to_vec()));
        assert_eq!(line(&mut framer), Some(Vec::new()));
        assert!(framer.take_line().is_none());
        let mut exact = vec![b'x'; MAX_LINE_BYTES];
        exact.push(b'\n');
        framer.append(&exact);
        assert_eq!(line(&mut framer).map(|l| l.len()), Some(MAX_LINE_BYTES));
        let mut over = vec![b'y'; MAX_LINE_BYTES + 1];
        over.extend_from_slice(b"\nnext\n");
        framer.append(&over);
        assert_eq!(framer.take_line(), Some(Err(LineTooLong)));
        assert_eq!(line(&mut framer), Some(b"next".to_vec()));
        framer.append(&vec![b'z'; MAX_LINE_BYTES + 1]);
        assert_eq!(framer.take_line(), Some(Err(LineTooLong)));
        framer.append(b"zz");
        assert!(framer.take_line().is_none());
        framer.append(b"z\nafter\n");
        assert_eq!(line(&mut framer), Some(b"after".to_vec()));
    }

    #[test]
    fn the_end_of_output_counts_an_unterminated_line() {
        let mut framer = Framer::default();
        framer.append(b"done\npart");
        assert_eq!(line(&mut framer), Some(b"done".to_vec()));
        assert!(framer.has_pending());
        assert_eq!(framer.discard_pending(), 4);
        assert!(!framer.has_pending());
        assert_eq!(framer.discard_pending(), 0);
    }
}
