//! `mcp.oauth`: issuer, client, grant and where its secrets come from.

use std::collections::HashSet;

use super::{env_ref, no_nul};
use crate::config::reader::{Fail, Field, Fields};
use crate::config::{OAuthOptions, rules};
use crate::contract::{AuthMethod, OAuthGrant};

const OAUTH_KEYS: &[&str] = &[
    "issuer",
    "client_id",
    "grant",
    "client_secret_env",
    "refresh_token_env",
    "token_file",
    "scopes",
    "redirect_port",
    "token_endpoint_auth_method",
];

/// Reads `mcp.oauth`, then checks that the grant has what it needs to get a token.
pub(super) fn oauth(f: &Field<'_>) -> Result<OAuthOptions, Fail> {
    let map = f.at().section("a mapping of OAuth settings", OAUTH_KEYS)?;
    let issuer = map.nonblank("issuer", "a non-blank issuer URL")?;
    let g = map.require("grant")?;
    let grant = grant(g)?;
    let client_id = client_id(&map, grant)?;
    let env = |key| map.get(key).map(|e| Ok(env_ref(e.at())?.to_string()));
    let client_secret_env = env("client_secret_env").transpose()?;
    let refresh_token_env = env("refresh_token_env").transpose()?;
    let token_file = map.get("token_file").map(token_file).transpose()?;
    let scopes = map
        .get("scopes")
        .map(scopes)
        .transpose()?
        .unwrap_or_default();
    let redirect_port = match map.get("redirect_port") {
        Some(p) => Some(u16::try_from(p.at().whole(rules::PORT)?).unwrap_or(0)),
        None => None,
    };
    let missing = match grant {
        OAuthGrant::ClientCredentials if client_secret_env.is_none() => {
            Some("grant `client_credentials` requires `client_secret_env`")
        }
        OAuthGrant::RefreshToken if refresh_token_env.is_none() && token_file.is_none() => {
            Some("grant `refresh_token` requires `refresh_token_env` or `token_file`")
        }
        OAuthGrant::AuthorizationCode if token_file.is_none() => {
            Some("grant `authorization_code` requires `token_file`")
        }
        _ => None,
    };
    if let Some(msg) = missing {
        return Err(g.path.fail(msg));
    }
    if let (None, Some(f)) = (&client_id, map.get("client_secret_env")) {
        return Err(f.path.fail_key(
            "names the secret of a configured client_id; a registered client's secret is saved in the token file",
        ));
    }
    let token_endpoint_auth_method = match map.get("token_endpoint_auth_method") {
        Some(f) => {
            let method = auth_method(f)?;
            // A registered client's secret comes from the token file, not a variable.
            let secret = client_secret_env.is_some() || client_id.is_none();
            if let Some(msg) = method_conflict(method, grant, secret) {
                return Err(f.path.fail(msg));
            }
            Some(method)
        }
        None => None,
    };
    // A client-credentials token is never refreshed: a refresh token configured for one is a
    // mistake, refused by name. (`redirect_port` on other grants is harmless and accepted, as
    // the Go reference accepts it; only `login` uses it.)
    if grant == OAuthGrant::ClientCredentials
        && let Some(f) = map.get("refresh_token_env")
    {
        return Err(f.path.fail_key(
            "not used by grant `client_credentials`: a client-credentials token is never refreshed",
        ));
    }
    Ok(OAuthOptions {
        issuer,
        client_id,
        grant,
        client_secret_env,
        refresh_token_env,
        token_file,
        scopes,
        redirect_port,
        token_endpoint_auth_method,
    })
}

/// Why `method` cannot authenticate this client, if it cannot: a public method with a
/// secret, or for a grant that needs a confidential client; a confidential one without.
fn method_conflict(method: AuthMethod, grant: OAuthGrant, secret: bool) -> Option<&'static str> {
    match (method.confidential(), secret) {
        (false, _) if grant == OAuthGrant::ClientCredentials => Some(
            "grant `client_credentials` needs a confidential client (client_secret_basic or client_secret_post)",
        ),
        (false, true) => Some(
            "`none` is a public client: remove `client_secret_env`, or choose client_secret_basic or client_secret_post",
        ),
        (true, false) => {
            Some("a confidential method needs the client's secret: set `client_secret_env`")
        }
        _ => None,
    }
}

/// `token_endpoint_auth_method`: one of the three this client speaks.
fn auth_method(f: &Field<'_>) -> Result<AuthMethod, Fail> {
    let s = f.at().str("a token endpoint auth method")?;
    AuthMethod::parse(s).ok_or_else(|| {
        let methods = AuthMethod::ALL.map(AuthMethod::as_str);
        f.path.fail(rules::unknown("method", &methods, s))
    })
}

/// `grant`: one of the three this client speaks.
/// The configured client id. Only a login may leave it out, to register its client
/// (`login --register`, saved in the token file): every other grant names one.
fn client_id(map: &Fields<'_>, grant: OAuthGrant) -> Result<Option<String>, Fail> {
    match map.get("client_id") {
        Some(c) => Ok(Some(c.at().nonblank("a non-blank client id")?.to_string())),
        None if grant == OAuthGrant::AuthorizationCode => Ok(None),
        None => map.require("client_id").map(|_| None),
    }
}

fn grant(g: &Field<'_>) -> Result<OAuthGrant, Fail> {
    let s = g.at().str("an OAuth grant")?;
    OAuthGrant::parse(s).ok_or_else(|| {
        let grants = OAuthGrant::ALL.map(OAuthGrant::as_str);
        g.path.fail(rules::unknown("grant", &grants, s))
    })
}

/// `token_file`: a non-blank path without NUL.
fn token_file(t: &Field<'_>) -> Result<String, Fail> {
    let s = no_nul(t.at(), "a non-blank file path")?;
    if rules::is_blank(s) {
        return Err(t
            .path
            .fail("expected a non-blank file path, found a blank string"));
    }
    Ok(s.to_string())
}

/// `scopes`: unique RFC 6749 scope tokens (printable ASCII, no space, `"` or `\`).
fn scopes(f: &Field<'_>) -> Result<Vec<String>, Fail> {
    let mut scopes: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for (path, scope) in f.at().str_list("a list of scopes", "a scope")? {
        if !crate::text::is_scope_token(scope) {
            return Err(
                path.fail("expected a scope of printable ASCII without spaces, `\"` or `\\`")
            );
        }
        if !seen.insert(scope) {
            return Err(path.fail("duplicate scope"));
        }
        scopes.push(scope.to_string());
    }
    Ok(scopes)
}
