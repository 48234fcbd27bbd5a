//! One target run's JSON-RPC channel: request ids, per-era params, the transport.
//!
//! Ids start at 1 for every session and advance by one per message sent, notifications
//! included. Modern requests get the per-request `_meta` envelope appended to their params;
//! legacy requests carry their params as they are.

use serde_json::value::RawValue;

use super::era::Era;
use super::jsonrpc;
use super::transport::{Mirror, Outgoing, Reply, Transport, TransportError};
use crate::contract::Revision;
use crate::result::reason::Malformed;
use crate::runtime::Attempt;

/// Our client name, sent in `clientInfo` in both eras.
pub const CLIENT_NAME: &str = "agenthealth";
/// Our real version, sent in `clientInfo` in both eras.
pub const CLIENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `"_meta":{…}` member every modern request carries: protocol version, client
/// capabilities (the OAuth client-credentials extension when that grant is configured) and
/// client identity.
pub fn meta(client_credentials: bool) -> String {
    let capabilities = if client_credentials {
        r#"{"extensions":{"io.modelcontextprotocol/oauth-client-credentials":{}}}"#
    } else {
        "{}"
    };
    format!(
        concat!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{}","#,
            r#""io.modelcontextprotocol/clientCapabilities":{},"#,
            r#""io.modelcontextprotocol/clientInfo":{{"name":"{}","version":"{}"}}}}"#
        ),
        Revision::MODERN.as_str(),
        capabilities,
        CLIENT_NAME,
        CLIENT_VERSION
    )
}

/// The JSON-RPC side of one target run's session.
pub struct Session {
    transport: Box<dyn Transport>,
    next_id: u64,
    meta: String,
    last_method: &'static str,
}

impl Session {
    /// A session over `transport`. `client_credentials` declares the OAuth client-credentials
    /// extension in modern requests.
    pub fn new(transport: Box<dyn Transport>, client_credentials: bool) -> Session {
        Session {
            transport,
            next_id: 1,
            meta: meta(client_credentials),
            last_method: "",
        }
    }

    /// The method of the last message sent (our own word, for evidence).
    pub fn last_method(&self) -> &'static str {
        self.last_method
    }

    /// The transport, for probes and cleanup.
    pub fn transport(&mut self) -> &mut dyn Transport {
        self.transport.as_mut()
    }

    /// Sends `method` with params made of `members` (the members of a JSON object, without
    /// braces, possibly empty) and returns the result.
    pub fn request(
        &mut self,
        method: &'static str,
        members: &str,
        era: Era,
        attempt: &Attempt,
    ) -> Result<Reply, TransportError> {
        self.send(method, members, era, Mirror::default(), attempt)
    }

    /// Like [`Session::request`], and in the modern era the transport also mirrors `name`
    /// (`Mcp-Name`) and `params` (`Mcp-Param-<name>: <encoded value>`) into headers. Other
    /// eras carry no such headers.
    pub fn request_named(
        &mut self,
        method: &'static str,
        members: &str,
        era: Era,
        name: &str,
        params: &[(String, String)],
        attempt: &Attempt,
    ) -> Result<Reply, TransportError> {
        let mirror = if era.is_modern() {
            Mirror {
                name: Some(name),
                params,
            }
        } else {
            Mirror::default()
        };
        self.send(method, members, era, mirror, attempt)
    }

    fn send(
        &mut self,
        method: &'static str,
        members: &str,
        era: Era,
        mirror: Mirror<'_>,
        attempt: &Attempt,
    ) -> Result<Reply, TransportError> {
        self.last_method = method;
        let id = self.take_id();
        let params = self.params(members, era.is_modern())?;
        let body = jsonrpc::encode_request(id, method, Some(&params));
        let out = Outgoing {
            method,
            id: Some(id),
            body: &body,
            era,
            mirror,
        };
        self.transport.request(&out, attempt)
    }

    /// Sends independent requests at once (see [`Transport::request_all`]): `calls` are
    /// (method, members) pairs as for [`Session::request`], ids given in order. Returns each
    /// outcome in the same order.
    pub fn request_all(
        &mut self,
        calls: &[(&'static str, &str)],
        era: Era,
        attempt: &Attempt,
    ) -> Vec<Result<Reply, TransportError>> {
        let mut bodies = Vec::with_capacity(calls.len());
        for (method, members) in calls {
            self.last_method = method;
            let id = self.take_id();
            let body = self
                .params(members, era.is_modern())
                .map(|params| jsonrpc::encode_request(id, method, Some(&params)));
            bodies.push((id, *method, body));
        }
        let outs: Vec<Outgoing<'_>> = bodies
            .iter()
            .filter_map(|(id, method, body)| {
                let body = body.as_ref().ok()?;
                Some(Outgoing {
                    method,
                    id: Some(*id),
                    body,
                    era,
                    mirror: Mirror::default(),
                })
            })
            .collect();
        let mut replies = self.transport.request_all(&outs, attempt).into_iter();
        bodies
            .into_iter()
            .map(|(_, _, body)| match body {
                Ok(_) => replies
                    .next()
                    .unwrap_or_else(|| Err(TransportError::unanswered(attempt))),
                Err(e) => Err(e),
            })
            .collect()
    }

    /// Names `method` as the one whose failure is being reported (after several were sent at
    /// once, the last one sent need not be it).
    pub fn blame(&mut self, method: &'static str) {
        self.last_method = method;
    }

    /// Sends a notification without params.
    pub fn notify(
        &mut self,
        method: &'static str,
        era: Era,
        attempt: &Attempt,
    ) -> Result<(), TransportError> {
        self.last_method = method;
        self.take_id();
        let body = jsonrpc::encode_notification(method, None);
        let out = Outgoing {
            method,
            id: None,
            body: &body,
            era,
            mirror: Mirror::default(),
        };
        self.transport.notify(&out, attempt)
    }

    /// Forgets the session: the transport discards its connection, session or process and
    /// ids start again at 1.
    pub fn discard(&mut self) {
        self.transport.discard();
        self.next_id = 1;
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(1);
        id
    }

    fn params(&self, members: &str, modern: bool) -> Result<Box<RawValue>, TransportError> {
        let mut text = String::with_capacity(2 + members.len() + self.meta.len() + 1);
        text.push('{');
        text.push_str(members);
        if modern {
            if !members.is_empty() {
                text.push(',');
            }
            text.push_str(&self.meta);
        }
        text.push('}');
        // Our own text; failing here is a bug in the caller's members, reported as malformed.
        RawValue::from_string(text)
            .map_err(|_| TransportError::Malformed(Malformed::Request("request params")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn meta_is_valid_json_with_the_envelope_keys() {
        for cc in [false, true] {
            let text = format!("{{{}}}", meta(cc));
            let v: Value = serde_json::from_str(&text).expect("json");
            let m = &v["_meta"];
            assert_eq!(m["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
            assert_eq!(m["io.modelcontextprotocol/clientInfo"]["name"], CLIENT_NAME);
            assert_eq!(
                m["io.modelcontextprotocol/clientInfo"]["version"],
                CLIENT_VERSION
            );
            let caps = &m["io.modelcontextprotocol/clientCapabilities"];
            assert_eq!(
                caps.get("extensions").is_some(),
                cc,
                "client credentials extension declared only with that grant"
            );
        }
    }
}
