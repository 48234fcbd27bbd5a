//! What a refused response head says beyond its status, for the adapters' evidence: where a
//! redirect points, and whether a 401/403 challenged for credentials.
//!
//! Both facts are derived from our configuration and fixed words: a `Location` is compared
//! with the configured endpoint (with and without its trailing slash, over `https`) and then
//! dropped; a `WWW-Authenticate` header is noticed, and of its text only whether a 401's
//! names `resource_metadata` (RFC 9728: the server uses OAuth) is kept. So `doctor` can say
//! "configure the endpoint with a trailing slash", "this 403 is an allow-list, not a
//! credential problem" or "this server uses OAuth" without any server text reaching the
//! output.

use crate::result::reason::Redirect;
use crate::result::{Evidence, Fact, Key};

use super::{Endpoint, HeaderMap};

/// The auth-param of an RFC 9728 challenge.
const RESOURCE_METADATA: &[u8] = b"resource_metadata";

/// The facts of one refused response head.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeadFacts {
    /// For a 3xx: where it points.
    pub redirect: Option<Redirect>,
    /// For a 401/403: whether it carried `WWW-Authenticate`.
    pub challenged: Option<bool>,
    /// A 401 whose challenge names `resource_metadata`.
    pub oauth: bool,
}

impl HeadFacts {
    /// The facts of a response with `status` and `headers` to a request for `endpoint`.
    pub fn of(endpoint: &Endpoint, status: u16, headers: &HeaderMap) -> HeadFacts {
        let redirect = (300..400).contains(&status).then(|| {
            headers
                .get("location")
                .and_then(|v| v.to_str().ok())
                .map_or(Redirect::Elsewhere, |l| endpoint.redirect_to(l))
        });
        let challenged =
            matches!(status, 401 | 403).then(|| headers.contains_key("www-authenticate"));
        let oauth = status == 401
            && headers.get_all("www-authenticate").iter().any(|v| {
                v.as_bytes()
                    .windows(RESOURCE_METADATA.len())
                    .any(|w| w.eq_ignore_ascii_case(RESOURCE_METADATA))
            });
        HeadFacts {
            redirect,
            challenged,
            oauth,
        }
    }

    /// Records `redirect` and `auth_challenge`, when known.
    pub fn write(&self, evidence: &mut Evidence) {
        if let Some(r) = self.redirect {
            evidence.set(Key::Redirect, Fact::Word(r.as_word()));
        }
        if let Some(c) = self.challenged {
            evidence.set(Key::AuthChallenge, Fact::Bool(c));
        }
        if self.oauth {
            evidence.set(Key::OauthChallenge, Fact::Bool(true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(endpoint: &str, status: u16, headers: &[(&'static str, &str)]) -> HeadFacts {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(*name, value.parse().expect("header value"));
        }
        HeadFacts::of(&Endpoint::parse(endpoint).expect("endpoint"), status, &map)
    }

    #[test]
    fn a_redirect_is_compared_with_the_endpoint() {
        let e = "http://127.0.0.1:8080/mcp";
        let to = |l: &str| facts(e, 307, &[("location", l)]).redirect;
        assert_eq!(to("/mcp/"), Some(Redirect::TrailingSlash));
        assert_eq!(
            to("http://127.0.0.1:8080/mcp/"),
            Some(Redirect::TrailingSlash)
        );
        assert_eq!(to("https://127.0.0.1:8080/mcp"), Some(Redirect::Https));
        assert_eq!(to("http://127.0.0.1:9/mcp/"), Some(Redirect::Elsewhere));
        assert_eq!(to("/other"), Some(Redirect::Elsewhere));
        assert_eq!(to("mcp/"), Some(Redirect::Elsewhere));
        assert_eq!(facts(e, 302, &[]).redirect, Some(Redirect::Elsewhere));
        assert_eq!(facts(e, 200, &[("location", "/mcp/")]).redirect, None);
        let to = |l: &str| facts("http://h/mcp/?a=1", 308, &[("location", l)]).redirect;
        assert_eq!(to("/mcp?a=1"), Some(Redirect::NoTrailingSlash));
        assert_eq!(to("/mcp"), Some(Redirect::Elsewhere), "the query differs");
    }

    #[test]
    fn a_challenge_is_noticed_on_401_and_403_only() {
        let e = "http://h/mcp";
        assert_eq!(facts(e, 403, &[]).challenged, Some(false));
        let bearer = [("www-authenticate", "Bearer")];
        assert_eq!(facts(e, 403, &bearer).challenged, Some(true));
        assert_eq!(facts(e, 401, &bearer).challenged, Some(true));
        assert_eq!(facts(e, 404, &bearer).challenged, None);
        let mut ev = Evidence::default();
        facts(e, 403, &[]).write(&mut ev);
        assert_eq!(ev.get(Key::AuthChallenge), Some(&Fact::Bool(false)));
        assert_eq!(ev.get(Key::Redirect), None);
        assert_eq!(ev.get(Key::OauthChallenge), None);
    }

    #[test]
    fn a_401_naming_resource_metadata_says_the_server_uses_oauth() {
        let e = "http://h/mcp";
        let rfc9728 = [(
            "www-authenticate",
            r#"Bearer error="invalid_token", Resource_Metadata="http://h/.well-known/oauth-protected-resource/mcp""#,
        )];
        assert!(facts(e, 401, &rfc9728).oauth);
        assert!(!facts(e, 403, &rfc9728).oauth);
        assert!(!facts(e, 401, &[("www-authenticate", "Bearer realm=\"x\"")]).oauth);
        let mut ev = Evidence::default();
        facts(e, 401, &rfc9728).write(&mut ev);
        assert_eq!(ev.get(Key::OauthChallenge), Some(&Fact::Bool(true)));
    }
}
