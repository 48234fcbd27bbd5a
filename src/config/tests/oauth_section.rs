//! `mcp.oauth`: the issuer, the client, the grant and what each grant needs, the variables
//! that hold its secrets, the token file, the callback port and the scopes.

use super::*;
use crate::contract::AuthMethod;

/// A target whose `mcp.oauth` mapping holds `body`.
fn oauth(body: &str) -> String {
    one("mcp", &format!("mcp:\n  oauth: {{{body}}}"))
}

/// A complete client-credentials client.
const CC: &str = "issuer: i, client_id: c, grant: client_credentials, client_secret_env: S";
/// A complete authorization-code client.
const AC: &str = "issuer: i, client_id: c, grant: authorization_code, token_file: /t";

/// The `mcp.oauth` of a target that loads.
fn loaded(body: &str) -> crate::config::OAuthOptions {
    root(&oauth(body)).mcp.unwrap().oauth.unwrap()
}

#[test]
fn each_grant_keeps_what_it_needs() {
    let o = loaded(
        "issuer: 'https://a', client_id: c, grant: client_credentials, client_secret_env: SECRET",
    );
    assert_eq!(o.grant, OAuthGrant::ClientCredentials);
    assert_eq!(o.client_secret_env.as_deref(), Some("SECRET"));
    let o =
        loaded("issuer: 'https://a', client_id: c, grant: authorization_code, token_file: /t.json");
    assert_eq!(o.grant, OAuthGrant::AuthorizationCode);
    assert_eq!(o.token_file.as_deref(), Some("/t.json"));
    let r = loaded("issuer: i, client_id: c, grant: refresh_token, token_file: /t");
    assert_eq!(
        (r.grant, r.token_file.as_deref()),
        (OAuthGrant::RefreshToken, Some("/t"))
    );
    let r = loaded(&format!("{AC}, scopes: ['a:b', c], redirect_port: 0"));
    assert_eq!(r.scopes, vec!["a:b", "c"]);
    assert_eq!(r.redirect_port, Some(0));
    // Accepted as the Go reference accepts them.
    assert!(load_str(&oauth(&format!("{CC}, redirect_port: 8765"))).is_ok());
    assert!(load_str(&oauth(&format!("{AC}, refresh_token_env: R"))).is_ok());
}

#[test]
fn each_grant_requires_its_secret_or_its_token_file() {
    refuses(&[
        (
            oauth("issuer: i, client_id: c, grant: client_credentials"),
            "targets[0].mcp.oauth.grant",
            "grant `client_credentials` requires `client_secret_env`",
        ),
        (
            oauth("issuer: i, client_id: c, grant: authorization_code"),
            "targets[0].mcp.oauth.grant",
            "grant `authorization_code` requires `token_file`",
        ),
        (
            oauth("issuer: i, client_id: c, grant: refresh_token"),
            "targets[0].mcp.oauth.grant",
            "grant `refresh_token` requires `refresh_token_env` or `token_file`",
        ),
    ]);
}

#[test]
fn a_refresh_token_for_client_credentials_is_refused_by_name() {
    // A refresh token for a grant that never refreshes is refused by name.
    let e = load_str(&oauth(&format!("{CC}, refresh_token_env: R"))).err();
    let e = e.unwrap_or_else(|| panic!("refused"));
    assert_eq!(e.path, "targets[0].mcp.oauth.refresh_token_env");
    assert!(
        e.expected
            .starts_with("not used by grant `client_credentials`")
    );
}

#[test]
fn the_issuer_the_client_and_the_grant_are_required() {
    let grants =
        "unknown grant; expected one of client_credentials, refresh_token, authorization_code";
    refuses(&[
        (
            oauth("client_id: c, grant: client_credentials, client_secret_env: S"),
            "targets[0].mcp.oauth",
            "missing required key `issuer`",
        ),
        (
            oauth("issuer: ' ', client_id: c, grant: client_credentials, client_secret_env: S"),
            "targets[0].mcp.oauth.issuer",
            "expected a non-blank issuer URL, found a blank string",
        ),
        (
            oauth("issuer: i, grant: client_credentials, client_secret_env: S"),
            "targets[0].mcp.oauth",
            "missing required key `client_id`",
        ),
        (
            oauth("issuer: i, client_id: '', grant: client_credentials, client_secret_env: S"),
            "targets[0].mcp.oauth.client_id",
            "expected a non-blank client id, found a blank string",
        ),
        (
            oauth("issuer: i, client_id: c"),
            "targets[0].mcp.oauth",
            "missing required key `grant`",
        ),
        (
            oauth(&format!("issuer: i, client_id: c, grant: {CANARY}")),
            "targets[0].mcp.oauth.grant",
            grants,
        ),
    ]);
    rejects(
        &oauth("issuer: i, client_id: c, grant: refresh_tokn"),
        "targets[0].mcp.oauth.grant",
        "unknown grant; expected one of client_credentials, refresh_token, authorization_code \
         (did you mean `refresh_token`?)",
    );
}

#[test]
fn secrets_are_named_by_their_variables_never_given() {
    refuses(&[
        (
            oauth("issuer: i, client_id: c, grant: client_credentials, client_secret_env: 'A=B'"),
            "targets[0].mcp.oauth.client_secret_env",
            "expected the name of an environment variable; `=` and NUL are not allowed",
        ),
        (
            oauth("issuer: i, client_id: c, grant: client_credentials, client_secret_env: ''"),
            "targets[0].mcp.oauth.client_secret_env",
            "expected the name of an environment variable, found a blank string",
        ),
        (
            oauth("issuer: i, client_id: c, grant: refresh_token, refresh_token_env: ' '"),
            "targets[0].mcp.oauth.refresh_token_env",
            "expected the name of an environment variable, found a blank string",
        ),
        (
            oauth(&format!("{CC}, client_secret: {CANARY}")),
            "targets[0].mcp.oauth.client_secret",
            "unknown key; expected one of issuer, client_id, grant, client_secret_env, \
             refresh_token_env, token_file, scopes, redirect_port, \
             token_endpoint_auth_method (did you mean `client_secret_env`?)",
        ),
    ]);
}

#[test]
fn the_token_file_is_a_non_blank_path() {
    refuses(&[
        (
            oauth("issuer: i, client_id: c, grant: authorization_code, token_file: ' '"),
            "targets[0].mcp.oauth.token_file",
            "expected a non-blank file path, found a blank string",
        ),
        (
            oauth("issuer: i, client_id: c, grant: authorization_code, token_file: \"/a\\0\""),
            "targets[0].mcp.oauth.token_file",
            "expected a non-blank file path; NUL is not allowed",
        ),
    ]);
}

#[test]
fn the_redirect_port_is_a_port_number() {
    let range = "expected an integer from 0 to 65535; out of range";
    refuses(&[
        (
            one(
                "mcp",
                "mcp:\n  oauth: {issuer: i, client_id: c, grant: client_credentials, client_secret_env: S, redirect_port: 65536}",
            ),
            "targets[0].mcp.oauth.redirect_port",
            range,
        ),
        (
            oauth(&format!("{AC}, redirect_port: -1")),
            "targets[0].mcp.oauth.redirect_port",
            range,
        ),
        (
            oauth(&format!("{AC}, redirect_port: 65536")),
            "targets[0].mcp.oauth.redirect_port",
            range,
        ),
        (
            oauth(&format!("{AC}, redirect_port: '8080'")),
            "targets[0].mcp.oauth.redirect_port",
            "expected an integer from 0 to 65535, found a string",
        ),
    ]);
}

#[test]
fn scopes_are_unique_printable_tokens() {
    let scope = "expected a scope of printable ASCII without spaces, `\"` or `\\`";
    for bad in ["'a b'", "''", "'a\"b'", "'a\\b'", "'é'"] {
        rejects(
            &oauth(&format!("{CC}, scopes: [ok, {bad}]")),
            "targets[0].mcp.oauth.scopes[1]",
            scope,
        );
    }
    refuses(&[
        (
            oauth(&format!("{CC}, scopes: [a, a]")),
            "targets[0].mcp.oauth.scopes[1]",
            "duplicate scope",
        ),
        (
            oauth(&format!("{CC}, scopes: [1]")),
            "targets[0].mcp.oauth.scopes[0]",
            "expected a scope, found an integer",
        ),
    ]);
}

#[test]
fn the_oauth_block_is_a_mapping_and_replaces_auth() {
    rejects(
        &one("mcp", "mcp:\n  oauth: null"),
        "targets[0].mcp.oauth",
        "expected a mapping of OAuth settings, found null",
    );
    rejects_at(
        &one(
            "mcp",
            "auth: {bearer_env: T}\nmcp:\n  oauth: {issuer: i, client_id: c, grant: client_credentials, client_secret_env: S}",
        ),
        "targets[0].auth",
        "cannot be combined with `mcp.oauth`",
        6,
    );
}

#[test]
fn the_token_endpoint_auth_method_is_one_of_three_and_fits_the_client() {
    assert_eq!(loaded(CC).token_endpoint_auth_method, None);
    let o = loaded(&format!(
        "{CC}, token_endpoint_auth_method: client_secret_post"
    ));
    assert_eq!(
        o.token_endpoint_auth_method,
        Some(AuthMethod::ClientSecretPost)
    );
    let o = loaded(&format!("{AC}, token_endpoint_auth_method: none"));
    assert_eq!(o.token_endpoint_auth_method, Some(AuthMethod::None));
    let at = "targets[0].mcp.oauth.token_endpoint_auth_method";
    refuses(&[
        (
            oauth(&format!("{CC}, token_endpoint_auth_method: none")),
            at,
            "grant `client_credentials` needs a confidential client (client_secret_basic or \
             client_secret_post)",
        ),
        (
            oauth(&format!(
                "{AC}, client_secret_env: S, token_endpoint_auth_method: none"
            )),
            at,
            "`none` is a public client: remove `client_secret_env`, or choose \
             client_secret_basic or client_secret_post",
        ),
        (
            oauth(&format!(
                "{AC}, token_endpoint_auth_method: client_secret_basic"
            )),
            at,
            "a confidential method needs the client's secret: set `client_secret_env`",
        ),
        (
            oauth(&format!(
                "{CC}, token_endpoint_auth_method: private_key_jwt"
            )),
            at,
            "unknown method; expected one of client_secret_basic, client_secret_post, none",
        ),
    ]);
    rejects(
        &oauth(&format!(
            "{CC}, token_endpoint_auth_method: client_secret_pots"
        )),
        at,
        "unknown method; expected one of client_secret_basic, client_secret_post, none \
         (did you mean `client_secret_post`?)",
    );
}

#[test]
fn only_a_login_may_leave_the_client_to_registration() {
    let registered = loaded("issuer: i, grant: authorization_code, token_file: /t");
    assert_eq!(registered.client_id, None);
    // Its secret, if any, comes from the registration saved in the token file.
    let o = loaded(
        "issuer: i, grant: authorization_code, token_file: /t, token_endpoint_auth_method: client_secret_post",
    );
    assert_eq!(
        o.token_endpoint_auth_method,
        Some(AuthMethod::ClientSecretPost)
    );
    assert_eq!(loaded(CC).client_id.as_deref(), Some("c"));
    refuses(&[
        (
            oauth("issuer: i, grant: refresh_token, refresh_token_env: R"),
            "targets[0].mcp.oauth",
            "missing required key `client_id`",
        ),
        (
            oauth("issuer: i, grant: authorization_code, token_file: /t, client_secret_env: S"),
            "targets[0].mcp.oauth.client_secret_env",
            "names the secret of a configured client_id; a registered client's secret is saved \
             in the token file",
        ),
    ]);
}
