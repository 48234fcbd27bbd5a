//! The OAuth lab's scripted browser: what a person's browser does between
//! `agenthealth login` printing its authorization URL and the callback arriving.
//!
//! [`Browser::authorize`] GETs the URL, follows the authorization server's redirects with a
//! cookie jar (oidc-provider binds the interaction to `_interaction*` cookies), and on each
//! approval page (`servers/oauth_as.mjs` serves a plain HTML form) submits the form whose
//! `decision` is the one asked for, until a redirect points at the callback. It returns that
//! callback URL without fetching it; [`Browser::deliver`] then GETs it as the browser would,
//! so a test can first look at `code`, `state` and `iss`. Bounded: at most [`MAX_STEPS`]
//! requests, each with the socket timeouts of `oauth_http`.

use crate::oauth_http::{self, Response};

/// Requests one authorization may take (oidc-provider needs about six).
pub const MAX_STEPS: usize = 20;

/// What the lab user answers on the approval page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Deny,
}

impl Decision {
    fn value(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Deny => "deny",
        }
    }
}

#[derive(Clone, Debug)]
struct Cookie {
    authority: String,
    name: String,
    value: String,
    path: String,
}

/// A cookie jar and a history; one per authorization.
#[derive(Default)]
pub struct Browser {
    cookies: Vec<Cookie>,
    /// `METHOD URL -> status` of every request, for failure messages.
    pub history: Vec<String>,
}

impl Browser {
    pub fn new() -> Browser {
        Browser::default()
    }

    /// Follows `url` until a redirect satisfies `is_callback`; returns that URL.
    pub fn authorize(
        &mut self,
        url: &str,
        decision: Decision,
        is_callback: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let mut next = (String::from("GET"), url.to_owned(), String::new());
        for _ in 0..MAX_STEPS {
            let (method, url, form) = next;
            let response = self.send(&method, &url, &form)?;
            if (300..400).contains(&response.status) {
                let location = response
                    .header("location")
                    .ok_or_else(|| self.fail(&format!("{} without Location", response.status)))?;
                let target = oauth_http::resolve(&url, location);
                if is_callback(&target) {
                    return Ok(target);
                }
                next = (String::from("GET"), target, String::new());
                continue;
            }
            if response.status == 200 {
                let page = response.text();
                if let Some((action, fields)) = pick_form(&page, decision) {
                    let pairs: Vec<(&str, &str)> = fields
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    next = (
                        String::from("POST"),
                        oauth_http::resolve(&url, &action),
                        oauth_http::form_encode(&pairs),
                    );
                    continue;
                }
            }
            return Err(self.fail(&format!(
                "unexpected HTTP {} at {url}: {}",
                response.status,
                response.text()
            )));
        }
        Err(self.fail("no callback redirect"))
    }

    /// GETs the callback URL like the browser would (no cookies: another origin).
    pub fn deliver(&mut self, callback: &str) -> std::io::Result<Response> {
        let response = oauth_http::get(callback, &[("Accept", "text/html")])?;
        self.history
            .push(format!("GET {callback} -> {}", response.status));
        Ok(response)
    }

    fn send(&mut self, method: &str, url: &str, form: &str) -> Result<Response, String> {
        let (authority, target) = oauth_http::split_url(url);
        let path = target.split('?').next().unwrap_or("/").to_owned();
        let cookie = self
            .cookies
            .iter()
            .filter(|c| c.authority == authority && path_matches(&path, &c.path))
            .map(|c| format!("{}={}", c.name, c.value))
            .collect::<Vec<_>>()
            .join("; ");
        let mut headers = vec![("Accept", "text/html")];
        if !cookie.is_empty() {
            headers.push(("Cookie", cookie.as_str()));
        }
        if method == "POST" {
            headers.push(("Content-Type", "application/x-www-form-urlencoded"));
        }
        let response = oauth_http::request(method, url, &headers, form.as_bytes())
            .map_err(|err| self.fail(&format!("{method} {url}: {err}")))?;
        self.history
            .push(format!("{method} {url} -> {}", response.status));
        for set in response.headers_named("set-cookie") {
            self.store(&authority, &path, set);
        }
        Ok(response)
    }

    fn store(&mut self, authority: &str, request_path: &str, set_cookie: &str) {
        let mut parts = set_cookie.split(';').map(str::trim);
        let Some((name, value)) = parts.next().and_then(|nv| nv.split_once('=')) else {
            return;
        };
        let mut path = request_path[..request_path.rfind('/').unwrap_or(0).max(1)].to_owned();
        let mut expired = false;
        for attribute in parts {
            let (key, val) = attribute.split_once('=').unwrap_or((attribute, ""));
            match key.to_ascii_lowercase().as_str() {
                "path" if val.starts_with('/') => path = val.to_owned(),
                "max-age" => expired |= val.trim().parse::<i64>().is_ok_and(|s| s <= 0),
                "expires" => expired |= val.contains("1970"),
                _ => {}
            }
        }
        self.cookies
            .retain(|c| !(c.authority == authority && c.name == name && c.path == path));
        if !expired {
            self.cookies.push(Cookie {
                authority: authority.to_owned(),
                name: name.to_owned(),
                value: value.to_owned(),
                path,
            });
        }
    }

    fn fail(&self, what: &str) -> String {
        format!(
            "scripted browser: {what}\nhistory:\n  {}",
            self.history.join("\n  ")
        )
    }
}

/// RFC 6265 §5.1.4 path-match.
fn path_matches(request: &str, cookie: &str) -> bool {
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request.as_bytes().get(cookie.len()) == Some(&b'/')))
}

/// The form on `page` whose hidden `decision` input is `decision`: its action and fields.
fn pick_form(page: &str, decision: Decision) -> Option<(String, Vec<(String, String)>)> {
    page.split("<form").skip(1).find_map(|chunk| {
        let form = chunk.split("</form>").next()?;
        let action = attribute(form.split('>').next()?, "action")?;
        let fields: Vec<(String, String)> = form
            .split("<input")
            .skip(1)
            .filter_map(|input| {
                let tag = input.split('>').next()?;
                Some((
                    attribute(tag, "name")?,
                    attribute(tag, "value").unwrap_or_default(),
                ))
            })
            .collect();
        fields
            .iter()
            .any(|(k, v)| k == "decision" && v == decision.value())
            .then(|| (action.replace("&amp;", "&"), fields))
    })
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(tag[start..start + len].to_owned())
}
