//! `fake_mcp_server`: runs the fake MCP server as a process, for the README's tour, `make
//! demo` and `make bench`. The command line is the test kit's (`fake_mcp::cli`, where the
//! documentation tests read it too):
//!
//! ```text
//! fake_mcp_server [--port N] [--route PATH=PRESET]... [--era legacy:VERSION|modern|dual[:VERSION]]
//!                 [--mode json|sse|mixed] [--tls CA_FILE] [--until-killed] [--list-presets]
//! ```
//!
//! With no arguments it listens on `127.0.0.1:3000` and serves the routes the README lists.
//! Once bound, exactly one line `listening on http://127.0.0.1:PORT` (`https://`) is printed
//! (and flushed) on stdout. When stdin is a pipe (`make demo`'s coprocess, the benchmark) the
//! server runs until it reaches end-of-file; otherwise (a terminal, `/dev/null`, or with
//! `--until-killed`) it never reads stdin — so a background job of an interactive shell
//! (`cargo run --example fake_mcp_server &`) is never stopped for terminal input — and only a
//! signal stops it.

use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

use agenthealth_testkit::fake_mcp::cli::{self, Parsed, stdin_ends_the_server};

fn main() -> ExitCode {
    let o = match cli::parse(std::env::args().skip(1)) {
        Ok(Parsed::Serve(o)) => o,
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("fake_mcp_server: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match o.start() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fake_mcp_server: {e}");
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
    let pipe = io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .is_ok_and(|fd| stdin_ends_the_server(&std::fs::File::from(fd)));
    if o.until_killed || !pipe {
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
