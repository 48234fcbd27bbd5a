//! `fake_mcp_server`: runs the fake MCP server as a process, for `make demo`
//! and `make bench`.
//!
//! ```text
//! fake_mcp_server [--port N] [--route PATH=PRESET]... [--era legacy:VERSION|modern|dual[:VERSION]]
//!                 [--mode json|sse|mixed] [--tls CA_FILE] [--until-killed] [--list-presets]
//! ```
//!
//! `/mcp` serves the `healthy` preset unless a `--route /mcp=PRESET` replaces
//! it. `--era` and `--mode` apply to every route whose preset does not choose
//! its own era or mode. `--tls CA_FILE` serves HTTPS with a certificate for
//! `127.0.0.1` and `localhost` from a fresh test CA, whose certificate is written
//! to `CA_FILE` (PEM, for `SSL_CERT_FILE`). Once bound, exactly one line
//! `listening on http://127.0.0.1:PORT` (`https://`) is printed (and flushed) on stdout.
//! The server then runs until stdin reaches end-of-file or the process is
//! killed. When stdin is `/dev/null` (a background job in a Makefile) or
//! `--until-killed` is given, stdin is ignored and only a signal stops it.

use std::io::{self, Read, Write};
use std::process::ExitCode;

// The fake server and the test TLS material, from the test kit the tests use.
use agenthealth_testkit::fake_mcp::{
    Era, FakeConfig, FakeServer, LEGACY_VERSIONS, Mode, PRESETS, preset, preset_info,
};
use agenthealth_testkit::tls::{TestCa, server_wrap};

const USAGE: &str = "usage: fake_mcp_server [--port N] [--route PATH=PRESET]... \
[--era legacy:VERSION|modern|dual[:VERSION]] [--mode json|sse|mixed] [--tls CA_FILE] [--until-killed] \
[--list-presets]";

struct Options {
    port: u16,
    routes: Vec<(String, String)>,
    era: Option<Era>,
    mode: Option<Mode>,
    tls: Option<std::path::PathBuf>,
    until_killed: bool,
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

fn parse_args() -> Result<Option<Options>, String> {
    let mut o = Options {
        port: 0,
        routes: Vec::new(),
        era: None,
        mode: None,
        tls: None,
        until_killed: false,
    };
    let mut args = std::env::args().skip(1);
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
            "--route" => {
                let v = value()?;
                let (path, name) = v
                    .split_once('=')
                    .ok_or_else(|| format!("--route {v:?}: expected PATH=PRESET"))?;
                if !path.starts_with('/') {
                    return Err(format!("--route {v:?}: the path must start with '/'"));
                }
                if preset_info(name).is_none() {
                    return Err(format!("unknown preset {name:?} (see --list-presets)"));
                }
                o.routes.push((path.to_string(), name.to_string()));
            }
            "--era" => o.era = Some(parse_era(&value()?)?),
            "--mode" => {
                o.mode = Some(match value()?.as_str() {
                    "json" => Mode::Json,
                    "sse" => Mode::Sse,
                    "mixed" => Mode::Mixed,
                    other => return Err(format!("invalid --mode {other:?} (json, sse or mixed)")),
                })
            }
            "--tls" => o.tls = Some(value()?.into()),
            "--until-killed" => o.until_killed = true,
            "--list-presets" => {
                for p in PRESETS {
                    println!("{:<20} {}", p.name, p.about);
                }
                return Ok(None);
            }
            "-h" | "--help" => {
                println!("{USAGE}\n\npresets:");
                for p in PRESETS {
                    println!("  {:<20} {}", p.name, p.about);
                }
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Some(o))
}

fn configured(name: &str, o: &Options) -> FakeConfig {
    let mut cfg = preset(name).unwrap_or_default();
    let info = preset_info(name);
    if let Some(era) = &o.era {
        if !info.is_some_and(|i| i.sets_era) {
            cfg.era = era.clone();
        }
    }
    if let Some(mode) = &o.mode {
        if !info.is_some_and(|i| i.sets_mode) {
            cfg.response = mode.clone();
        }
    }
    cfg
}

fn stdin_is_dev_null() -> bool {
    std::fs::read_link("/proc/self/fd/0").is_ok_and(|p| p == std::path::Path::new("/dev/null"))
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(Some(o)) => o,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake_mcp_server: {e}");
            return ExitCode::from(2);
        }
    };
    let main_preset = o
        .routes
        .iter()
        .rev()
        .find(|(p, _)| p == "/mcp")
        .map_or("healthy", |(_, n)| n.as_str());
    let mut cfg = configured(main_preset, &o);
    cfg.routes = o
        .routes
        .iter()
        .filter(|(p, _)| p != "/mcp")
        .map(|(p, n)| (p.clone(), configured(n, &o)))
        .collect();
    let wrap = match &o.tls {
        None => None,
        Some(path) => {
            let ca = TestCa::new();
            if let Err(e) = std::fs::write(path, &ca.pem) {
                eprintln!("fake_mcp_server: cannot write {}: {e}", path.display());
                return ExitCode::from(1);
            }
            Some(server_wrap(ca.leaf(&["127.0.0.1", "localhost"])))
        }
    };
    let server = match FakeServer::try_start_wrapped(cfg, o.port, wrap) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "fake_mcp_server: cannot listen on 127.0.0.1:{}: {e}",
                o.port
            );
            return ExitCode::from(1);
        }
    };
    let mut out = io::stdout().lock();
    if writeln!(out, "listening on {}", server.base())
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::from(1);
    }
    drop(out);
    if o.until_killed || stdin_is_dev_null() {
        loop {
            std::thread::park();
        }
    }
    // Serve until stdin reaches EOF (or errors).
    let mut sink = [0u8; 4096];
    let mut stdin = io::stdin().lock();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    drop(server);
    ExitCode::SUCCESS
}
