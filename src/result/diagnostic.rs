//! The contract's diagnostic codes, each with its canonical message.

/// A diagnostic code: a classified failure with a fixed, canonical message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each variant's meaning is its message
pub enum DiagnosticCode {
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

impl DiagnosticCode {
    /// The result spelling (`http_status`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::HttpStatus => "http_status",
            DiagnosticCode::HttpHeaders => "http_headers",
            DiagnosticCode::HttpBody => "http_body",
            DiagnosticCode::HttpBodyLimit => "http_body_limit",
            DiagnosticCode::HttpAuth => "http_auth",
            DiagnosticCode::McpProcess => "mcp_process",
            DiagnosticCode::McpOauth => "mcp_oauth",
            DiagnosticCode::McpLogin => "mcp_login",
            DiagnosticCode::McpInput => "mcp_input",
            DiagnosticCode::McpAuth => "mcp_auth",
            DiagnosticCode::McpHttp => "mcp_http",
            DiagnosticCode::McpProtocol => "mcp_protocol",
            DiagnosticCode::McpVersion => "mcp_version",
            DiagnosticCode::McpLimit => "mcp_limit",
            DiagnosticCode::McpRpc => "mcp_rpc",
            DiagnosticCode::McpRequired => "mcp_required",
            DiagnosticCode::McpUnsafe => "mcp_unsafe",
            DiagnosticCode::McpFunctional => "mcp_functional",
        }
    }

    /// The canonical message shown for this code.
    pub fn message(self) -> &'static str {
        match self {
            DiagnosticCode::HttpStatus => "HTTP status did not match expected status",
            DiagnosticCode::HttpHeaders => "required HTTP response header did not match",
            DiagnosticCode::HttpBody => "HTTP response body did not contain required text",
            DiagnosticCode::HttpBodyLimit => {
                "HTTP response body exceeded the configured size limit"
            }
            DiagnosticCode::HttpAuth => "HTTP authentication rejected (401 or 403)",
            DiagnosticCode::McpProcess => {
                "MCP subprocess could not start or exited before responding"
            }
            DiagnosticCode::McpOauth => {
                "MCP OAuth configuration, discovery or token acquisition failed"
            }
            DiagnosticCode::McpLogin => "MCP OAuth login is required; use agenthealth login",
            DiagnosticCode::McpInput => "MCP response requires unsupported input or continuation",
            DiagnosticCode::McpAuth => "MCP authentication rejected (401 or 403)",
            DiagnosticCode::McpHttp => "MCP endpoint returned an unexpected HTTP status",
            DiagnosticCode::McpProtocol => "invalid MCP initialization or JSON-RPC response",
            DiagnosticCode::McpVersion => {
                "MCP protocol version is unsupported or differs from the pinned version"
            }
            DiagnosticCode::McpLimit => "MCP response or discovery exceeded safety limits",
            DiagnosticCode::McpRpc => "MCP server rejected the protocol request",
            DiagnosticCode::McpRequired => "required MCP tool, resource or prompt is missing",
            DiagnosticCode::McpUnsafe => {
                "functional tool lacks explicit read-only and non-destructive annotations"
            }
            DiagnosticCode::McpFunctional => "MCP functional invocation failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_valid_identifiers() {
        let all = [
            DiagnosticCode::HttpStatus,
            DiagnosticCode::HttpHeaders,
            DiagnosticCode::HttpBody,
            DiagnosticCode::HttpBodyLimit,
            DiagnosticCode::HttpAuth,
            DiagnosticCode::McpProcess,
            DiagnosticCode::McpOauth,
            DiagnosticCode::McpLogin,
            DiagnosticCode::McpInput,
            DiagnosticCode::McpAuth,
            DiagnosticCode::McpHttp,
            DiagnosticCode::McpProtocol,
            DiagnosticCode::McpVersion,
            DiagnosticCode::McpLimit,
            DiagnosticCode::McpRpc,
            DiagnosticCode::McpRequired,
            DiagnosticCode::McpUnsafe,
            DiagnosticCode::McpFunctional,
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
