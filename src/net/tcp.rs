//! Our own TCP connections: the innermost link of the connector chain, so that the socket is
//! ours to tune. ureq's `TcpTransport` hides its socket; we need it for one option.
//!
//! Why: a kept-alive connection to a server that writes a response in two segments (its head,
//! then its body) with Nagle's algorithm on — uvicorn under the Python MCP SDK is one — stalls
//! for Linux's delayed-ACK timer (≈ 40 ms) on every exchange after the first few: the server
//! holds the body until its head is acknowledged, and our kernel, no longer in its quick-ACK
//! start-up phase, waits for data to piggyback the ACK on. A loopback capture shows the body
//! leaving the server 40 ms after the head, right after our bare ACK. The cure is ours alone
//! (we cannot set the server's `TCP_NODELAY`):
//!
//! * `TCP_QUICKACK` is set again after every read (Linux clears it by itself; setting it also
//!   sends an ACK that is pending), so whatever arrives is acknowledged at once and a
//!   Nagle-held segment is released without waiting for the timer. Set through `nix`'s
//!   `setsockopt` (the option is declared with nix's own `sockopt_impl!`: nix 0.32 lacks it),
//!   so no `unsafe` of ours;
//! * `TCP_NODELAY`, so our own small writes are never held either;
//! * a request leaves in one `write` ([`super::connect::Watched`] joins head and body), so the
//!   server reads it whole and our side never has two segments in flight.
//!
//! It also reads the kernel's round trip of each new connection (`TCP_INFO`'s smoothed RTT,
//! [`TcpTransport::rtt`]): the one measure of the link that neither the server's work nor our
//! own scheduling delay inflates, which the MCP transport's lane decision needs.
//!
//! The rest is what ureq's connector did: each resolved address in turn, the connect budget
//! shared among them; timeouts on every read and write; a shutdown handle registered with the
//! agent (its abort cuts blocked I/O); an idle connection probed before reuse, so one the
//! server closed is replaced by a fresh one before a byte of the request is written.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::buffers::ConnBuffers;
use super::failure::ForbiddenAddress;
use crate::contract::AllowList;
use nix::errno::Errno;
use nix::libc;
use nix::sys::socket::{MsgFlags, getsockopt, recv, setsockopt};
use nix::{getsockopt_impl, setsockopt_impl, sockopt_impl};
use ureq::unversioned::transport::time;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, NextTimeout, ShutdownHandle, Transport,
};
use ureq::{Error, Timeout};

sockopt_impl!(
    /// `TCP_QUICKACK`: acknowledge received segments at once (cleared again by the kernel).
    QuickAck,
    SetOnly,
    libc::IPPROTO_TCP,
    libc::TCP_QUICKACK,
    bool
);

/// The head of Linux's `struct tcp_info` up to `tcpi_total_retrans`: 8 one-byte fields, then
/// 24 `u32`s, unchanged since Linux 2.6. Only this head is asked for: the kernel writes the
/// smaller of the size asked and its own struct, so a newer (larger) layout than the running
/// kernel has — libc's full `tcp_info` — would come back short where this never does on Linux.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfoHead {
    flags: [u8; 8],
    before_rtt: [u32; 15],
    /// `tcpi_rtt`: the smoothed round trip, in microseconds.
    rtt: u32,
    after_rtt: [u32; 8],
}

sockopt_impl!(
    /// `TCP_INFO`, its stable head ([`TcpInfoHead`]); `None` when less than its `tcpi_rtt`
    /// came back.
    TcpInfo,
    GetOnly,
    libc::IPPROTO_TCP,
    libc::TCP_INFO,
    Option<TcpInfoHead>,
    ShortTolerant
);

/// The getter of [`TcpInfo`]. nix's own getter of a struct (`GetStruct`) asserts that the
/// kernel wrote exactly the size asked — a panic, so an abort, where it wrote less: qemu-user
/// (7.2, which `make test-aarch64` runs the arm64 binary under) answers every `IPPROTO_TCP`
/// option with 4 bytes. This one starts from a zeroed head and keeps it only when the answer
/// reached past `tcpi_rtt`: a short answer is no round trip, so no lanes.
struct ShortTolerant {
    len: libc::socklen_t,
    head: TcpInfoHead,
}

impl nix::sys::socket::sockopt::Get<Option<TcpInfoHead>> for ShortTolerant {
    fn uninit() -> Self {
        ShortTolerant {
            len: std::mem::size_of::<TcpInfoHead>() as libc::socklen_t,
            head: TcpInfoHead::default(),
        }
    }

    fn ffi_ptr(&mut self) -> *mut libc::c_void {
        (&mut self.head as *mut TcpInfoHead).cast()
    }

    fn ffi_len(&mut self) -> *mut libc::socklen_t {
        &mut self.len
    }

    // `unsafe` is the trait's signature only: no unsafe operation here, the head is
    // initialised (zeroed) before the kernel writes any of it.
    #[allow(unsafe_code)]
    unsafe fn assume_init(self) -> Option<TcpInfoHead> {
        whole_rtt(self.len).then_some(self.head)
    }
}

/// Whether an answer of `len` bytes holds `tcpi_rtt` whole.
fn whole_rtt(len: libc::socklen_t) -> bool {
    len as usize >= std::mem::offset_of!(TcpInfoHead, rtt) + std::mem::size_of::<u32>()
}

/// The least connect time an address gets when several share the budget.
const MIN_PER_ADDRESS: Duration = Duration::from_millis(10);

/// Opens a connection to the first of `details.addrs` that accepts, within the connect budget,
/// and registers its shutdown handle with the agent. With `allow`, every address is checked
/// right before its connect (the resolver checked them too: this holds whatever produced
/// the address), and a refused one fails the exchange before any packet is sent.
pub(crate) fn connect(
    details: &ConnectionDetails,
    allow: Option<&AllowList>,
) -> Result<TcpTransport, Error> {
    if let Some(allow) = allow {
        for addr in details.addrs.iter() {
            allow
                .admit_address(addr.ip())
                .map_err(ForbiddenAddress::error)?;
        }
    }
    let budget = exact(details.timeout);
    let started = std::time::Instant::now();
    let count = details.addrs.len();
    let mut last = None;
    for (i, addr) in details.addrs.iter().enumerate() {
        let per_address = match budget {
            None => None,
            Some(total) => {
                let left = total.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Err(Error::Timeout(details.timeout.reason));
                }
                // What is left, shared evenly among the addresses not yet tried.
                let share = u32::try_from(count - i).unwrap_or(u32::MAX).max(1);
                Some((left / share).max(MIN_PER_ADDRESS).min(left))
            }
        };
        match connect_one(addr, per_address) {
            Ok(stream) => {
                let config = details.config;
                let buffers =
                    ConnBuffers::new(config.input_buffer_size(), config.output_buffer_size());
                let transport = TcpTransport::new(stream, buffers)?;
                (details.register_shutdown)(transport.shutdown_handle())?;
                return Ok(transport);
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                last = Some(Error::Timeout(Timeout::Connect));
            }
            Err(e) if next_address_may_work(&e) => last = Some(Error::Io(e)),
            Err(e) => return Err(Error::Io(e)),
        }
    }
    Err(last.unwrap_or_else(|| Error::Io(io::ErrorKind::ConnectionRefused.into())))
}

fn connect_one(addr: &SocketAddr, timeout: Option<Duration>) -> io::Result<TcpStream> {
    match timeout {
        Some(t) => TcpStream::connect_timeout(addr, t),
        None => TcpStream::connect(addr),
    }
}

/// A refusal or a routing error concerns only the address tried.
fn next_address_may_work(e: &io::Error) -> bool {
    use io::ErrorKind as K;
    matches!(
        e.kind(),
        K::ConnectionRefused
            | K::HostUnreachable
            | K::NetworkUnreachable
            | K::NetworkDown
            | K::AddrNotAvailable
    )
}

/// The time a [`NextTimeout`] leaves, `None` when it never ends.
fn exact(timeout: NextTimeout) -> Option<Duration> {
    match timeout.after {
        time::Duration::Exact(d) => Some(d),
        time::Duration::NotHappening => None,
    }
}

/// The timeout for one blocking call: `Err` when none is left.
fn io_timeout(timeout: NextTimeout) -> Result<Option<Duration>, Error> {
    match exact(timeout) {
        Some(d) if d.is_zero() => Err(Error::Timeout(timeout.reason)),
        other => Ok(other),
    }
}

/// An open connection: a socket shared with its shutdown handle, and ureq's buffers.
pub(crate) struct TcpTransport {
    stream: Arc<TcpStream>,
    buffers: ConnBuffers,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

impl TcpTransport {
    fn new(stream: TcpStream, buffers: ConnBuffers) -> Result<TcpTransport, Error> {
        stream.set_nodelay(true)?;
        quick_ack(&stream);
        Ok(TcpTransport {
            stream: Arc::new(stream),
            buffers,
            read_timeout: None,
            write_timeout: None,
        })
    }

    /// The kernel's smoothed round trip of the connection (`tcpi_rtt`). Read right after
    /// connecting it is the handshake's sample: the network's round trip, which neither the
    /// server's work nor a busy machine's scheduling delay is part of (later samples can hold
    /// a slow server's delayed ACK). `None` when the kernel has no sample or cannot say.
    pub(crate) fn rtt(&self) -> Option<Duration> {
        let info = getsockopt(&*self.stream, TcpInfo).ok()??;
        (info.rtt > 0).then(|| Duration::from_micros(u64::from(info.rtt)))
    }

    /// ureq's own shutdown of a `TcpStream` (both directions), held weakly: it ends with the
    /// connection.
    fn shutdown_handle(&self) -> Weak<dyn ShutdownHandle> {
        Arc::downgrade(&self.stream) as Weak<dyn ShutdownHandle>
    }

    fn set_write_timeout(&mut self, timeout: NextTimeout) -> Result<(), Error> {
        let t = io_timeout(timeout)?;
        if t != self.write_timeout {
            self.stream.set_write_timeout(t)?;
            self.write_timeout = t;
        }
        Ok(())
    }

    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        if t != self.read_timeout {
            self.stream.set_read_timeout(t)?;
            self.read_timeout = t;
        }
        Ok(())
    }
}

/// Asks the kernel to acknowledge at once (best effort: a failure only costs the stall).
fn quick_ack(stream: &TcpStream) {
    let _ = setsockopt(stream, QuickAck, &true);
}

/// A timed-out socket call as ureq's timeout error; anything else as I/O.
fn io_error(e: io::Error, reason: Timeout) -> Error {
    match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Error::Timeout(reason),
        _ => Error::Io(e),
    }
}

impl Transport for TcpTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        let timeout = timeout.for_write();
        self.set_write_timeout(timeout)?;
        let output = self.buffers.output().get(..amount).unwrap_or_default();
        (&*self.stream)
            .write_all(output)
            .map_err(|e| io_error(e, timeout.reason))
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        let timeout = timeout.for_read();
        let limit = io_timeout(timeout)?;
        let started = std::time::Instant::now();
        self.set_read_timeout(limit)?;
        let n = loop {
            let input = self.buffers.input_append_buf();
            match (&*self.stream).read(input) {
                Ok(n) => break n,
                // A signal: read again within what is left (Linux does not restart a read
                // that has a timeout).
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    let left = limit.map(|l| l.saturating_sub(started.elapsed()));
                    if left.is_some_and(|l| l.is_zero()) {
                        return Err(Error::Timeout(timeout.reason));
                    }
                    self.set_read_timeout(left)?;
                }
                Err(e) => return Err(io_error(e, timeout.reason)),
            }
        };
        // Re-armed after every read: the next segment is acknowledged at once.
        quick_ack(&self.stream);
        self.buffers.input_appended(n);
        Ok(n > 0)
    }

    /// Whether an idle connection can be reused: nothing to read and no end of stream (one
    /// non-blocking peek). A server that closed it, or sent bytes nobody asked for, makes the
    /// pool open a new connection before the request is written.
    fn is_open(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let flags = MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT;
        matches!(
            recv(self.stream.as_raw_fd(), &mut byte, flags),
            Err(Errno::EAGAIN)
        )
    }
}

impl std::fmt::Debug for TcpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpTransport")
            .field("peer", &self.stream.peer_addr().ok())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tcp_info_head_is_the_104_bytes_every_kernel_writes() {
        assert_eq!(std::mem::size_of::<TcpInfoHead>(), 104);
        // `tcpi_rtt` is the sixteenth u32, after the eight one-byte fields.
        assert_eq!(std::mem::offset_of!(TcpInfoHead, rtt), 8 + 15 * 4);
    }

    /// qemu-user's 4 bytes (or anything short of `tcpi_rtt`'s end) are no sample, never a panic.
    #[test]
    fn a_short_tcp_info_is_no_round_trip() {
        assert!(!whole_rtt(0));
        assert!(!whole_rtt(4));
        assert!(!whole_rtt(71));
        assert!(whole_rtt(72));
        assert!(whole_rtt(104));
    }

    /// Loopback's round trip, as the kernel measured the handshake: microseconds.
    #[test]
    fn a_loopback_connection_has_a_kernel_round_trip_of_well_under_a_millisecond() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let stream = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let t = TcpTransport::new(stream, ConnBuffers::new(1024, 1024)).expect("transport");
        let rtt = t.rtt().unwrap_or_default();
        assert!(rtt < Duration::from_millis(5), "{rtt:?}");
    }
}
