//! The fake server's command line: what `cargo run --example fake_mcp_server -- ARGS` means,
//! parsed and started here so that the example and the documentation tests (which start the
//! server a page shows in-process, with the page's own arguments) are one program.
//!
//! ```text
//! fake_mcp_server [--port N] [--route PATH=PRESET]... [--era legacy:VERSION|modern|dual[:VERSION]]
//!                 [--mode json|sse|mixed] [--tls CA_FILE] [--until-killed] [--list-presets]
//! ```
//!
//! With no arguments it listens on `127.0.0.1:3000` ([`DEFAULT_PORT`], the address every
//! example file and page uses) and serves [`DOCUMENTED_ROUTES`], the routes the README's tour
//! describes; `--route PATH=PRESET` adds a route or replaces one, `--port 0` picks a free port.

use super::{Era, FakeConfig, FakeServer, LEGACY_VERSIONS, Mode, PRESETS, preset, preset_info};
use crate::tls::{TestCa, server_wrap};

/// The port the examples and the documentation use (the MCP specification's own examples
/// say `http://localhost:3000/mcp`; no page uses 3000 for anything else).
pub const DEFAULT_PORT: u16 = 3000;

/// What the server serves with no `--route`, besides its built-in paths (`/health` answers
/// 200 to `HEAD` and `GET`, any other unrouted path 404): path → preset. The README's tour
/// lists them; the pages' examples use them.
pub const DOCUMENTED_ROUTES: &[(&str, &str)] = &[
    // A legacy 2025-11-25 server with sessions and the default inventory (18 tools).
    ("/mcp", "healthy"),
    // The same without its `echo` tool.
    ("/broken", "missing-tool"),
    // A stateless 2026-07-28 server.
    ("/modern", "modern"),
    // Healthy, but only for `Authorization: Bearer demo-token` (401 otherwise, HEAD too);
    // the server's toy authorization server issues that token (docs/oauth.md).
    ("/private", "auth"),
    // What real servers answer on day one (docs/mcp.md): a gateway's 404 −32601 to
    // server/discover, an older Python SDK's 200 −32602, a 200 `{}` to server/discover, a
    // 2024-11-05-only server, a 307 to the path with a trailing slash, a 403 without a
    // challenge.
    ("/gateway", "gateway"),
    ("/stateless", "stateless-legacy"),
    ("/anything", "discover-empty"),
    ("/old", "legacy-2024-11-05"),
    ("/moved", "redirect-slash"),
    ("/forbidden", "forbidden-host"),
    // The deprecated HTTP+SSE transport (Python's SDK): HEAD 200, POST 405, GET its stream.
    ("/sse", "sse-legacy-python"),
    // Answers `HEAD`, reads every `POST` and never answers it (the run deadline's example).
    ("/hang", "hang"),
];

const USAGE: &str = "usage: fake_mcp_server [--port N] [--route PATH=PRESET]... \
[--era legacy:VERSION|modern|dual[:VERSION]] [--mode json|sse|mixed] [--tls CA_FILE] [--until-killed] \
[--list-presets]";

/// A parsed command line.
#[derive(Debug)]
pub struct Options {
    /// `--port` (default [`DEFAULT_PORT`]).
    pub port: u16,
    /// Path → preset, [`DOCUMENTED_ROUTES`] with the `--route`s applied.
    pub routes: Vec<(String, String)>,
    era: Option<Era>,
    mode: Option<Mode>,
    /// `--tls CA_FILE`.
    pub tls: Option<std::path::PathBuf>,
    /// `--until-killed`: serve until a signal whatever stdin is.
    pub until_killed: bool,
}

/// What a command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Serve.
    Serve(Options),
    /// Print this (`--help`, `--list-presets`) and exit 0.
    Print(String),
}

/// Parses the arguments after the program name; an error is the line to print (exit 2).
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed, String> {
    let mut o = Options {
        port: DEFAULT_PORT,
        routes: DOCUMENTED_ROUTES
            .iter()
            .map(|(p, n)| (p.to_string(), n.to_string()))
            .collect(),
        era: None,
        mode: None,
        tls: None,
        until_killed: false,
    };
    let presets = || {
        PRESETS
            .iter()
            .map(|p| format!("  {:<20} {}\n", p.name, p.about))
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--port" => {
                o.port = value()?
                    .parse()
                    .map_err(|_| "--port needs a number 0-65535".to_string())?
            }
            "--route" => route(&mut o.routes, &value()?)?,
            "--era" => o.era = Some(parse_era(&value()?)?),
            "--mode" => o.mode = Some(parse_mode(&value()?)?),
            "--tls" => o.tls = Some(value()?.into()),
            "--until-killed" => o.until_killed = true,
            "--list-presets" => return Ok(Parsed::Print(presets().collect())),
            "-h" | "--help" => {
                let list: String = presets().collect();
                return Ok(Parsed::Print(format!("{USAGE}\n\npresets:\n{list}")));
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Parsed::Serve(o))
}

/// Applies `--route PATH=PRESET`: replaces `PATH`'s preset, or adds the route.
fn route(routes: &mut Vec<(String, String)>, v: &str) -> Result<(), String> {
    let (path, name) = v
        .split_once('=')
        .ok_or_else(|| format!("--route {v:?}: expected PATH=PRESET"))?;
    if !path.starts_with('/') {
        return Err(format!("--route {v:?}: the path must start with '/'"));
    }
    if preset_info(name).is_none() {
        return Err(format!("unknown preset {name:?} (see --list-presets)"));
    }
    match routes.iter_mut().find(|(p, _)| p == path) {
        Some(entry) => entry.1 = name.to_string(),
        None => routes.push((path.to_string(), name.to_string())),
    }
    Ok(())
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    Ok(match s {
        "json" => Mode::Json,
        "sse" => Mode::Sse,
        "mixed" => Mode::Mixed,
        other => return Err(format!("invalid --mode {other:?} (json, sse or mixed)")),
    })
}

fn static_version(v: &str) -> Result<&'static str, String> {
    let ok = v.len() == 10
        && v.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !ok {
        return Err(format!(
            "invalid protocol version {v:?} (expected YYYY-MM-DD)"
        ));
    }
    // Known revisions are already 'static; others are leaked once (one-shot CLI).
    Ok(LEGACY_VERSIONS
        .iter()
        .copied()
        .find(|k| *k == v)
        .unwrap_or_else(|| Box::leak(v.to_string().into_boxed_str())))
}

fn parse_era(s: &str) -> Result<Era, String> {
    match s.split_once(':') {
        None if s == "modern" => Ok(Era::Modern),
        None if s == "dual" => Ok(Era::Dual("2025-11-25")),
        None if s == "legacy" => Ok(Era::Legacy("2025-11-25")),
        Some(("legacy", v)) => Ok(Era::Legacy(static_version(v)?)),
        Some(("dual", v)) => Ok(Era::Dual(static_version(v)?)),
        _ => Err(format!(
            "invalid --era {s:?} (legacy:VERSION, modern or dual[:VERSION])"
        )),
    }
}

impl Options {
    /// The configuration of preset `name` with `--era` and `--mode` applied where the preset
    /// does not choose its own.
    fn configured(&self, name: &str) -> FakeConfig {
        let mut cfg = preset(name).unwrap_or_default();
        let info = preset_info(name);
        if let Some(era) = &self.era
            && !info.is_some_and(|i| i.sets_era)
        {
            cfg.era = era.clone();
        }
        if let Some(mode) = &self.mode
            && !info.is_some_and(|i| i.sets_mode)
        {
            cfg.response = mode.clone();
        }
        cfg
    }

    /// The server's configuration: `/mcp`'s preset (`healthy` unless routed), every other
    /// route beside it.
    pub fn config(&self) -> FakeConfig {
        let main = self
            .routes
            .iter()
            .find(|(p, _)| p == "/mcp")
            .map_or("healthy", |(_, n)| n.as_str());
        let mut cfg = self.configured(main);
        cfg.routes = self
            .routes
            .iter()
            .filter(|(p, _)| p != "/mcp")
            .map(|(p, n)| (p.clone(), self.configured(n)))
            .collect();
        cfg
    }

    /// Binds and starts the server (writing the test CA's certificate to the `--tls` file
    /// first); an error is the line to print (exit 1). A taken port is named with what is
    /// most likely holding it.
    pub fn start(&self) -> Result<FakeServer, String> {
        let wrap = match &self.tls {
            None => None,
            Some(path) => {
                let ca = TestCa::new();
                std::fs::write(path, &ca.pem)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Some(server_wrap(ca.leaf(&["127.0.0.1", "localhost"])))
            }
        };
        FakeServer::try_start_wrapped(self.config(), self.port, wrap).map_err(|e| {
            let mut line = format!("cannot listen on 127.0.0.1:{}: {e}", self.port);
            if e.kind() == std::io::ErrorKind::AddrInUse {
                line.push_str(
                    "; is another fake_mcp_server still running (the README's is job %1: \
                     `kill %1` stops it)? `--port 0` picks a free port",
                );
            }
            line
        })
    }
}

/// Whether the server should stop when `stdin` reaches end-of-file: only when it is a pipe
/// (`make demo`'s coprocess, the benchmark). A terminal is never read — a background job of
/// an interactive shell that reads it is stopped (`SIGTTIN`) and every request would hang —
/// and neither is `/dev/null` nor a file.
pub fn stdin_ends_the_server(stdin: &std::fs::File) -> bool {
    use std::os::unix::fs::FileTypeExt;
    stdin.metadata().is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(args: &[&str]) -> Options {
        match parse(args.iter().map(|a| a.to_string())) {
            Ok(Parsed::Serve(o)) => o,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn no_arguments_is_the_documented_server_on_port_3000() {
        let o = serve(&[]);
        assert_eq!(o.port, 3000);
        assert_eq!(o.routes.len(), DOCUMENTED_ROUTES.len());
        assert!(!o.until_killed);
    }

    #[test]
    fn a_route_replaces_its_path_or_is_added() {
        let o = serve(&["--route", "/mcp=modern", "--route=/x=hang", "--port", "0"]);
        assert_eq!(o.port, 0);
        assert_eq!(o.routes[0], ("/mcp".into(), "modern".into()));
        assert_eq!(o.routes.last(), Some(&("/x".into(), "hang".into())));
        assert_eq!(o.routes.len(), DOCUMENTED_ROUTES.len() + 1);
    }

    #[test]
    fn bad_arguments_are_one_line() {
        for bad in [
            &["--route", "x=healthy"][..],
            &["--route", "/x=nope"],
            &["--bogus"],
        ] {
            assert!(parse(bad.iter().map(|a| a.to_string())).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_a_pipe_on_stdin_ends_the_server() {
        let (reader, _writer) = std::io::pipe().unwrap();
        assert!(stdin_ends_the_server(&std::fs::File::from(
            std::os::fd::OwnedFd::from(reader)
        )));
        for not_a_pipe in ["/dev/null", "/dev/ptmx", "Cargo.toml"] {
            let f = std::fs::File::options()
                .read(true)
                .write(true)
                .open(not_a_pipe);
            let f = f.or_else(|_| std::fs::File::open(not_a_pipe)).unwrap();
            assert!(!stdin_ends_the_server(&f), "{not_a_pipe}");
        }
    }

    #[test]
    fn a_taken_port_says_what_holds_it() {
        let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut o = serve(&[]);
        o.port = held.local_addr().unwrap().port();
        let e = o.start().err().expect("the port is taken");
        assert!(e.contains("kill %1") && e.contains("--port 0"), "{e}");
    }
}
