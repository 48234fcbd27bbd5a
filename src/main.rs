//! The `agenthealth` binary: runs [`agenthealth::run`] and exits with its code.

fn main() {
    let code = agenthealth::run(std::env::args_os().skip(1));
    std::process::exit(code);
}
