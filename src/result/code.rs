//! The contract's diagnostic codes, each with its canonical message.

/// A diagnostic code: a classified failure with a fixed, canonical message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each variant's meaning is its message
pub enum Code {
    HttpStatus,
    HttpHeaders,
    HttpBody,
    HttpBodyLimit,
    HttpAuth,
    McpProcess,
    McpOauth,
    McpLogin,
    McpInput,
    McpAuth,
    McpHttp,
    McpProtocol,
    McpVersion,
    McpLimit,
    McpRpc,
    McpRequired,
    McpUnsafe,
    McpFunctional,
}

impl Code {
    /// The result spelling (`http_status`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::HttpStatus => "http_status",
            Code::HttpHeaders => "http_headers",
            Code::HttpBody => "http_body",
            Code::HttpBodyLimit => "http_body_limit",
            Code::HttpAuth => "http_auth",
            Code::McpProcess => "mcp_process",
            Code::McpOauth => "mcp_oauth",
            Code::McpLogin => "mcp_login",
            Code::McpInput => "mcp_input",
            Code::McpAuth => "mcp_auth",
            Code::McpHttp => "mcp_http",
            Code::McpProtocol => "mcp_protocol",
            Code::McpVersion => "mcp_version",
            Code::McpLimit => "mcp_limit",
            Code::McpRpc => "mcp_rpc",
            Code::McpRequired => "mcp_required",
            Code::McpUnsafe => "mcp_unsafe",
            Code::McpFunctional => "mcp_functional",
        }
    }

    /// Whether the code means the target refused our credentials (or their absence).
    pub fn rejects_credentials(self) -> bool {
        matches!(self, Code::HttpAuth | Code::McpAuth)
    }

    /// The canonical message shown for this code.
    pub fn message(self) -> &'static str {
        match self {
            Code::HttpStatus => "HTTP status did not match expected status",
            Code::HttpHeaders => "required HTTP response header did not match",
            Code::HttpBody => "HTTP response body did not contain required text",
            Code::HttpBodyLimit => "HTTP response body exceeded the configured size limit",
            Code::HttpAuth => "HTTP authentication rejected (401 or 403)",
            Code::McpProcess => "MCP subprocess could not start or exited before responding",
            Code::McpOauth => "MCP OAuth configuration, discovery or token acquisition failed",
            Code::McpLogin => "MCP OAuth login is required; use agenthealth login",
            Code::McpInput => "MCP response requires unsupported input or continuation",
            Code::McpAuth => "MCP authentication rejected (401 or 403)",
            Code::McpHttp => "MCP endpoint returned an unexpected HTTP status",
            Code::McpProtocol => "invalid MCP initialization or JSON-RPC response",
            Code::McpVersion => {
                "MCP protocol version is unsupported or differs from the pinned version"
            }
            Code::McpLimit => "MCP response or discovery exceeded safety limits",
            Code::McpRpc => "MCP server rejected the protocol request",
            Code::McpRequired => "required MCP tool, resource or prompt is missing",
            Code::McpUnsafe => {
                "functional tool lacks explicit read-only and non-destructive annotations"
            }
            Code::McpFunctional => "MCP functional invocation failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_valid_identifiers() {
        let all = [
            Code::HttpStatus,
            Code::HttpHeaders,
            Code::HttpBody,
            Code::HttpBodyLimit,
            Code::HttpAuth,
            Code::McpProcess,
            Code::McpOauth,
            Code::McpLogin,
            Code::McpInput,
            Code::McpAuth,
            Code::McpHttp,
            Code::McpProtocol,
            Code::McpVersion,
            Code::McpLimit,
            Code::McpRpc,
            Code::McpRequired,
            Code::McpUnsafe,
            Code::McpFunctional,
        ];
        for c in all {
            let s = c.as_str();
            assert!(s.len() <= 64 && s.starts_with(|ch: char| ch.is_ascii_lowercase()));
            assert!(
                s.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
            );
            assert!(!c.message().is_empty());
        }
    }
}
