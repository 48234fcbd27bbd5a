//! Scripted replies: what a route returns for one request, friendly or hostile, and how the
//! server acts it out.

use std::io::Write;
use std::time::Duration;

use super::wire::{Request, head_bytes};
use super::{Conn, Flow};

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A complete response; `Content-Length` is added unless a header sets it. The
    /// connection stays open for the next request unless the request asked to close it.
    Respond {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body (not sent for `HEAD`).
        body: Vec<u8>,
    },
    /// Send these bytes verbatim (a whole response, head included); the connection stays
    /// open for the next request.
    Send(Vec<u8>),
    /// Writes these bytes in two writes, split at the index (a head, then its body), and
    /// keeps the connection open.
    Split(Vec<u8>, usize),
    /// The reply, after this long (a slow server; a stopping server answers at once).
    After(Duration, Box<Reply>),
    /// Send these bytes verbatim, then close cleanly (FIN). `Close(Vec::new())` closes
    /// without a byte.
    Close(Vec<u8>),
    /// Send these bytes verbatim, then hold the connection open without answering anything
    /// more, until the client closes it, the time is up or the server stops (an event
    /// stream left open, a head with a body that never comes).
    Hold(Vec<u8>, Duration),
    /// Read the request, then never answer; the connection is held until the client closes
    /// it or the server stops.
    HangBeforeHead,
    /// Send a head announcing `content_length`, then `sent`, then nothing more (held like
    /// [`Reply::HangBeforeHead`]).
    HangMidBody {
        /// Announced length.
        content_length: usize,
        /// What is actually sent.
        sent: Vec<u8>,
    },
    /// Send `bytes` (a whole response, head included) one byte per `every`, then close.
    Trickle {
        /// The bytes.
        bytes: Vec<u8>,
        /// Delay between bytes.
        every: Duration,
    },
    /// Reset the connection (RST) without sending a byte.
    ResetBeforeHead,
    /// Send a head announcing `content_length`, then `sent`, then reset.
    ResetMidBody {
        /// Announced length.
        content_length: usize,
        /// What is actually sent.
        sent: Vec<u8>,
    },
    /// Send a head announcing `content_length`, then `sent`, then close cleanly (FIN).
    CloseMidBody {
        /// Announced length.
        content_length: usize,
        /// What is actually sent.
        sent: Vec<u8>,
    },
}

impl Reply {
    /// A bodiless response with this status.
    pub fn status(status: u16) -> Reply {
        Reply::Respond {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds a header to a `Respond`.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Respond { headers, .. } = &mut self {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }

    /// Sets the body of a `Respond`.
    pub fn body(mut self, bytes: impl Into<Vec<u8>>) -> Reply {
        if let Reply::Respond { body, .. } = &mut self {
            *body = bytes.into();
        }
        self
    }

    /// Acts the reply out on `conn` for `request`. A write error ends the connection.
    pub(super) fn act(&self, request: &Request, conn: &mut Conn<'_>) -> Flow {
        self.try_act(request, conn).unwrap_or(Flow::Close)
    }

    fn try_act(&self, request: &Request, conn: &mut Conn<'_>) -> std::io::Result<Flow> {
        match self {
            Reply::Respond {
                status,
                headers,
                body,
            } => {
                let mut headers = headers.clone();
                if !headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                {
                    headers.push(("Content-Length".into(), body.len().to_string()));
                }
                let mut out = head_bytes(*status, &headers, false);
                if request.method != "HEAD" {
                    out.extend_from_slice(body);
                }
                conn.write_all(&out)?;
                conn.flush()?;
                Ok(if request.keep_alive() {
                    Flow::KeepAlive
                } else {
                    Flow::Close
                })
            }
            Reply::Send(bytes) => {
                conn.write_all(bytes)?;
                conn.flush()?;
                Ok(Flow::KeepAlive)
            }
            Reply::After(delay, reply) => {
                conn.wait(Some(*delay));
                reply.try_act(request, conn)
            }
            Reply::Split(bytes, at) => {
                let (head, body) = bytes.split_at((*at).min(bytes.len()));
                conn.write_all(head)?;
                conn.flush()?;
                conn.write_all(body)?;
                conn.flush()?;
                Ok(Flow::KeepAlive)
            }
            Reply::Close(bytes) => {
                conn.write_all(bytes)?;
                conn.flush()?;
                Ok(Flow::Close)
            }
            Reply::Hold(bytes, time) => {
                conn.write_all(bytes)?;
                conn.flush()?;
                conn.hold(Some(*time));
                Ok(Flow::Close)
            }
            Reply::HangBeforeHead => {
                conn.hold(None);
                Ok(Flow::Close)
            }
            Reply::HangMidBody {
                content_length,
                sent,
            } => {
                conn.write_all(&partial_head(*content_length))?;
                conn.write_all(sent)?;
                conn.flush()?;
                conn.hold(None);
                Ok(Flow::Close)
            }
            Reply::Trickle { bytes, every } => {
                for b in bytes {
                    conn.write_all(std::slice::from_ref(b))?;
                    conn.flush()?;
                    if conn.wait(Some(*every)) {
                        break;
                    }
                }
                Ok(Flow::Close)
            }
            Reply::ResetBeforeHead => Ok(Flow::Reset),
            Reply::ResetMidBody {
                content_length,
                sent,
            } => {
                conn.write_all(&partial_head(*content_length))?;
                conn.write_all(sent)?;
                conn.flush()?;
                Ok(Flow::Reset)
            }
            Reply::CloseMidBody {
                content_length,
                sent,
            } => {
                conn.write_all(&partial_head(*content_length))?;
                conn.write_all(sent)?;
                conn.flush()?;
                Ok(Flow::Close)
            }
        }
    }
}

fn partial_head(content_length: usize) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {content_length}\r\n\r\n"
    )
    .into_bytes()
}
