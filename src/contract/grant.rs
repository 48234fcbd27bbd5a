//! How an OAuth client obtains its token (`mcp.oauth.grant`): one word that the configuration
//! reads and the OAuth client follows.

/// An OAuth grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OAuthGrant {
    /// The client-credentials extension: a confidential client's own token.
    ClientCredentials,
    /// A refresh token supplied from outside (`refresh_token_env`) or saved.
    RefreshToken,
    /// Authorization code through `agenthealth login`, then refreshes.
    AuthorizationCode,
}

impl OAuthGrant {
    /// Every grant, in the order messages list them.
    pub const ALL: [OAuthGrant; 3] = [
        OAuthGrant::ClientCredentials,
        OAuthGrant::RefreshToken,
        OAuthGrant::AuthorizationCode,
    ];

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthGrant::ClientCredentials => "client_credentials",
            OAuthGrant::RefreshToken => "refresh_token",
            OAuthGrant::AuthorizationCode => "authorization_code",
        }
    }
}

/// How a client proves who it is at the token endpoint (`mcp.oauth.token_endpoint_auth_method`,
/// RFC 7591 §2's names; also the `auth_method` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthMethod {
    /// The client id and secret, form-encoded, in an HTTP Basic header (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// The client id and secret in the form body.
    ClientSecretPost,
    /// A public client: the client id alone.
    None,
}

impl AuthMethod {
    /// Every method, in the order messages list them.
    pub const ALL: [AuthMethod; 3] = [
        AuthMethod::ClientSecretBasic,
        AuthMethod::ClientSecretPost,
        AuthMethod::None,
    ];

    /// The protocol spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::None => "none",
        }
    }

    /// Whether the method presents a client secret.
    pub fn confidential(self) -> bool {
        self != AuthMethod::None
    }
}
