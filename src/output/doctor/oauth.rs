//! Advice for OAuth: which step of discovery, token acquisition or the token file failed,
//! and what to change.

use super::{int, word};
use crate::contract::Status;
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::{NO_REFRESH_TOKEN, OAuthStep, TokenError, TokenFileProblem};

/// The command that shows what the server publishes.
const DETAILS: &str = "`agenthealth doctor CONFIG --oauth-details`";

/// `with` or `without`, when the server names the issuer only a trailing slash apart.
fn slash(check: &Check) -> Option<&'static str> {
    match word(check, Key::IssuerSlash).as_deref() {
        Some("with") => Some("with"),
        Some("without") => Some("without"),
        _ => None,
    }
}

pub(super) fn advice(step: OAuthStep, check: &Check) -> String {
    if word(check, Key::Failure).as_deref() == Some("timeout") {
        return timed_out(step, check);
    }
    match step {
        OAuthStep::Issuer => "mcp.oauth.issuer must be an https URL (or http on localhost or a loopback address) without a query".into(),
        OAuthStep::Endpoint => "OAuth tokens are sent only to an https endpoint (or http on localhost or a loopback address); use the server's https URL".into(),
        OAuthStep::ResourceMetadata => "the server publishes no protected-resource metadata (RFC 9728): none named by its 401 challenge, none at /.well-known/oauth-protected-resource; check that the endpoint is the MCP URL of an OAuth-protected server".into(),
        OAuthStep::ResourceMetadataOrigin => "the 401 challenge names resource_metadata on another origin; agenthealth trusts only metadata from the MCP endpoint's own scheme, host and port".into(),
        OAuthStep::ResourceMismatch => "the protected-resource metadata describes another resource than this endpoint; configure the endpoint exactly as the server's resource URL".into(),
        OAuthStep::ResourceChanged => "the server's protected-resource metadata now names another resource than the one the saved grant was issued for, so it was not refreshed (a refresh for another resource can end the grant): log in again (`agenthealth login CONFIG TARGET`)".into(),
        OAuthStep::IssuerNotListed => match slash(check) {
            Some(how) => format!("the server's authorization_servers list mcp.oauth.issuer {how} the trailing slash, and issuers are compared exactly: write mcp.oauth.issuer {how} it"),
            None => format!("mcp.oauth.issuer is not among the server's authorization_servers (compared exactly, trailing slash included); {DETAILS} lists them"),
        },
        OAuthStep::ServerMetadata => match slash(check) {
            Some(how) => format!("the issuer's metadata names mcp.oauth.issuer {how} the trailing slash, and issuers are compared exactly: write mcp.oauth.issuer {how} it (if the server's authorization_servers then no longer list it, the two documents disagree and no issuer satisfies both: ask the server's operator)"),
            None => format!("the issuer publishes no authorization-server metadata whose issuer equals mcp.oauth.issuer exactly (tried /.well-known/oauth-authorization-server and /.well-known/openid-configuration); {DETAILS} shows what it publishes"),
        },
        OAuthStep::InsecureEndpoint => "the authorization server's token or authorization endpoint is not https; credentials travel only over https (or http on a loopback address)".into(),
        OAuthStep::AuthMethod => auth_method(check),
        OAuthStep::Pkce => "login needs PKCE S256, and the authorization server does not list it in code_challenge_methods_supported".into(),
        OAuthStep::TokenEndpoint(error) => token_endpoint(error, check),
        OAuthStep::TokenResponse => "the token endpoint's answer is not a usable bearer token (access_token, token_type Bearer, expires_in from 1 s to 10 years)".into(),
        OAuthStep::TokenFile(problem) => token_file(problem, check),
        OAuthStep::NoRefreshToken => "grant refresh_token needs a refresh token: set the variable named by mcp.oauth.refresh_token_env, or log in to fill mcp.oauth.token_file".into(),
        OAuthStep::Callback => "the authorization server's callback carried an error, a wrong issuer or no code; log in again".into(),
        OAuthStep::Registration => match int(check, Key::HttpStatus) {
            Some(status) => format!("the authorization server refused to register the client (HTTP {status}); register one by hand for the callback http://127.0.0.1:<redirect_port>/callback and set mcp.oauth.client_id"),
            None => "the server offers no (secure) dynamic registration, or its answer named no usable client: register a client for the callback http://127.0.0.1:<redirect_port>/callback and set mcp.oauth.client_id".into(),
        },
        OAuthStep::Par(error) => match error {
            Some(error) => format!("the authorization server requires pushed authorization requests (RFC 9126) and refused ours ({}): check the client's registration and mcp.oauth.scopes", error.as_word()),
            None => "the authorization server requires pushed authorization requests (RFC 9126), but names no secure pushed_authorization_request_endpoint, or its answer had no usable request_uri".into(),
        },
        OAuthStep::Cancelled => "the login was cancelled before the browser came back; log in again".into(),
    }
}

/// No saved credentials for `authorization_code`.
pub(super) fn login_required() -> String {
    "no saved credentials for grant authorization_code: run `agenthealth login CONFIG TARGET` where a browser is available (with --register when mcp.oauth names no client_id), then keep the token file at mcp.oauth.token_file".into()
}

/// The saved access token expired, and there is no refresh token.
pub(super) fn login_expired() -> String {
    format!("the saved access token expired and {NO_REFRESH_TOKEN}")
}

/// The client authentication was refused before any request.
fn auth_method(check: &Check) -> String {
    match word(check, Key::AuthMethod).as_deref() {
        Some("none") => "the authorization server lists only confidential token endpoint methods, and this client has no secret: set mcp.oauth.client_secret_env for a confidential client, or, if the server serves public clients anyway (the Python mcp SDK's servers do), set mcp.oauth.token_endpoint_auth_method: none".into(),
        Some(method) => format!("the authorization server does not list mcp.oauth.token_endpoint_auth_method ({method}) among its token endpoint methods; choose one it lists, or remove the setting"),
        None => "the authorization server supports neither client_secret_basic nor client_secret_post, so the client secret cannot be presented".into(),
    }
}

fn token_endpoint(error: Option<TokenError>, check: &Check) -> String {
    match error {
        Some(TokenError::InvalidClient) => match (word(check, Key::AuthMethod), word(check, Key::AuthMethodAlternative)) {
            (Some(used), Some(other)) => format!("the authorization server refused the client with {used} (invalid_client); it also lists {other}: if the client is registered for that, set mcp.oauth.token_endpoint_auth_method: {other}; else check mcp.oauth.client_id and the secret in the variable named by mcp.oauth.client_secret_env"),
            _ => "the authorization server rejected the client (invalid_client): check mcp.oauth.client_id and the secret in the variable named by mcp.oauth.client_secret_env".into(),
        },
        Some(TokenError::InvalidGrant) => "the refresh token or code was rejected (invalid_grant): it expired, was used twice or was revoked; run agenthealth login again, or replace the refresh token".into(),
        Some(TokenError::UnauthorizedClient) => "the client is not allowed this grant (unauthorized_client); check the client's registration or mcp.oauth.grant".into(),
        Some(TokenError::UnsupportedGrantType) => "the authorization server does not support this grant (unsupported_grant_type); check mcp.oauth.grant".into(),
        Some(TokenError::InvalidScope) => "the authorization server refused the scopes (invalid_scope); check mcp.oauth.scopes".into(),
        Some(TokenError::InvalidTarget) => "the authorization server refused the MCP resource (invalid_target); the endpoint must be a resource the client may request".into(),
        Some(TokenError::InvalidRequest) => "the authorization server refused the token request as malformed (invalid_request)".into(),
        None => match (int(check, Key::HttpStatus), word(check, Key::Failure)) {
            (_, Some(failure)) => format!("the token endpoint could not be reached ({failure}); check the authorization server"),
            (Some(status), None) => format!("the token endpoint answered HTTP {status}; check the authorization server and the client's registration"),
            (None, None) => "the token request failed; check the authorization server".into(),
        },
    }
}

/// A step whose request the deadline cut: nothing more is known of the server than that.
fn timed_out(step: OAuthStep, check: &Check) -> String {
    let what = match step {
        OAuthStep::ResourceMetadata => "the protected-resource metadata request",
        OAuthStep::ServerMetadata => "the authorization server's metadata request",
        _ => "the token request",
    };
    let how = if check.status == Status::Unknown {
        "started to answer but did not complete"
    } else {
        "got no answer"
    };
    format!(
        "{what} {how} within the check's deadline; check that the authorization server is up and reachable, and that timeout_ms is adequate"
    )
}

fn token_file(problem: TokenFileProblem, check: &Check) -> String {
    match problem {
        TokenFileProblem::Symlink => "mcp.oauth.token_file is a symbolic link; it must be a regular file".into(),
        TokenFileProblem::NotAFile => "mcp.oauth.token_file is not a regular file".into(),
        TokenFileProblem::Permissions => "the token file is readable by other users or owned by another; chmod 600 it (or delete it and log in again)".into(),
        TokenFileProblem::ParentWritable => "the token file's directory is writable by other users; make it private (chmod go-w)".into(),
        TokenFileProblem::Unreadable => "the token file cannot be read, or is larger than 64 KiB".into(),
        TokenFileProblem::Malformed => "the token file is not an agenthealth token file; delete it and log in again".into(),
        TokenFileProblem::Binding => "the token file holds credentials for another issuer, resource or client; delete it and log in again".into(),
        TokenFileProblem::Unwritable if check.status == Status::Degraded => format!(
            "the token file's volume cannot take a refreshed token ({}), so the token was not refreshed and the saved one is used until it expires; {}",
            os_word(check),
            volume_fix(check)
        ),
        TokenFileProblem::Unwritable => format!(
            "the token file or its directory cannot be written ({}); {}",
            os_word(check),
            volume_fix(check)
        ),
        TokenFileProblem::Unsaved => format!(
            "the refreshed credentials could not be saved ({}); this run used them and the next run recovers them from beside the token file; {}",
            os_word(check),
            volume_fix(check)
        ),
        TokenFileProblem::Locked => "another agenthealth run held the token file's lock until the deadline".into(),
    }
}

/// The operating system's reason, as the evidence names it.
fn os_word(check: &Check) -> String {
    word(check, Key::OsError).unwrap_or_else(|| "no reason given".into())
}

/// What to do about the volume of the token file, by the operating system's reason.
fn volume_fix(check: &Check) -> &'static str {
    match word(check, Key::OsError).as_deref() {
        Some("enospc" | "edquot") => {
            "free space on the volume of mcp.oauth.token_file (a refresh needs 64 KiB beside the file)"
        }
        Some("eio") => {
            "the volume of mcp.oauth.token_file reports I/O errors: repair or replace it"
        }
        Some("erofs") => "mount the volume of mcp.oauth.token_file read-write",
        Some("eacces" | "eperm") => "let this user write the directory of mcp.oauth.token_file",
        _ => "a token file needs private, writable storage",
    }
}
