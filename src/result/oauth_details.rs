//! What an OAuth-protected MCP server publishes about its authorization, for `doctor
//! --oauth-details` only: unlike everything else in this module it is server content, so it
//! never enters a result document and plain `doctor` never shows it. The OAuth client
//! validated every value before it got here: URLs are https (or loopback http) without
//! userinfo, query or fragment, at most 2 KiB of visible ASCII without quotes or
//! backslashes; scopes are RFC 6749 scope tokens; grants and methods are fixed words.

/// What one target's server publishes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OAuthDetails {
    /// The target's name (configured).
    pub target: String,
    /// The issuer `mcp.oauth` pins, when one is configured.
    pub pinned: Option<String>,
    /// The MCP endpoint's origin.
    pub endpoint_origin: String,
    /// The challenge named metadata on another origin: that origin (nothing else is read).
    pub named_origin: Option<String>,
    /// The server publishes no protected-resource metadata; its origin is its issuer
    /// (2025-03-26).
    pub compat: bool,
    /// The issuers the protected-resource metadata lists, exactly as listed.
    pub issuers: Vec<String>,
    /// The protected-resource metadata's `scopes_supported`.
    pub resource_scopes: Vec<String>,
    /// The first listed issuer whose own metadata names it exactly.
    pub server: Option<ServerDetails>,
    /// A listed issuer whose metadata names another issuer (only a trailing slash apart, or
    /// not): (listed, named).
    pub misnamed: Option<(String, String)>,
}

/// What an issuer's own metadata says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerDetails {
    /// `issuer`, exactly (it equals the listed one).
    pub issuer: String,
    /// `scopes_supported`.
    pub scopes: Vec<String>,
    /// The grants among `authorization_code`, `client_credentials`, `refresh_token` it offers.
    pub grants: Vec<&'static str>,
    /// It has a `registration_endpoint` (RFC 7591).
    pub registration: bool,
    /// The token endpoint methods among ours it lists (none listed: empty).
    pub methods: Vec<&'static str>,
}
