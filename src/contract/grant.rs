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
