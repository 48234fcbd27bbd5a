//! Advice for offline configuration rules that failed before any traffic.

use super::{Audience, Setting, word};
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::{EndpointProblem, Misconfig, TrustProblem};

pub(super) fn advice(problem: Misconfig, check: &Check, audience: Audience) -> Option<String> {
    let mut text = fix(problem, check, audience)?;
    // `validate` finds the same endpoint problems offline, with the key path and line.
    if let Misconfig::Endpoint(e) = problem
        && e != EndpointProblem::InvalidTlsName
        && !audience.adhoc
    {
        text.push_str("; `agenthealth validate` names its key and line");
    }
    Some(text)
}

fn fix(problem: Misconfig, check: &Check, audience: Audience) -> Option<String> {
    Some(match problem {
        Misconfig::Endpoint(e) => match e {
            EndpointProblem::Userinfo => format!(
                "the endpoint must not carry user:password@; give a token through {} instead",
                audience.name(Setting::BearerEnv)
            ),
            EndpointProblem::Fragment => "remove the #fragment from the endpoint".into(),
            EndpointProblem::UnsupportedScheme => "the endpoint must start with http:// or https://".into(),
            EndpointProblem::MissingHost => "the endpoint names no host; write it as http(s)://host[:port]/path".into(),
            EndpointProblem::InvalidTlsName => "an https endpoint needs a host name or IP address a certificate can be checked against".into(),
            EndpointProblem::Unparsable => "the endpoint is not a usable URL; write it as http(s)://host[:port]/path".into(),
        },
        Misconfig::CredentialControlCharacter => "the credential's value contains a control character (a trailing newline?); only TAB is allowed in a header".into(),
        Misconfig::TrustStore(t) => {
            let variable = word(check, Key::TrustStoreVariable)
                .map_or_else(|| "the trust store".to_string(), |v| format!("${v}"));
            match t {
                TrustProblem::Unreadable => {
                    format!("{variable} names a file or directory that cannot be read")
                }
                TrustProblem::NoCertificates => format!("{variable} holds no PEM certificate"),
                TrustProblem::Tls => "the trust store could not be loaded".into(),
            }
        }
        Misconfig::Proxy => {
            let variable = word(check, Key::Proxy).unwrap_or_else(|| "the proxy variable".into());
            format!(
                "${variable} is not a usable proxy; it must be an http:// or https:// proxy URL (or unset it, or list the host in NO_PROXY)"
            )
        }
        Misconfig::ProtocolPin => {
            let pin = word(check, Key::ProtocolVersion).unwrap_or_default();
            format!(
                "mcp.protocol_version `{pin}` is not a revision agenthealth supports ({}); nothing was sent",
                crate::contract::Revision::SPELLINGS.join(", ")
            )
        }
        Misconfig::StdioTarget => {
            "a stdio target needs an endpoint of the form stdio://<name> and an mcp.stdio block with its command".into()
        }
    })
}
