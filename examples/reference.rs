//! Writes the man page or a shell completion of agenthealth, generated from its flag table,
//! to stdout (`make dist` puts them into the release archive):
//!
//! ```sh
//! cargo run --example reference -- man > agenthealth.1
//! cargo run --example reference -- bash|zsh|fish > completion
//! ```

use agenthealth::reference::{Shell, completion, man_page};

fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let text = match what.as_str() {
        "man" => man_page(),
        name => match Shell::ALL.into_iter().find(|s| s.name() == name) {
            Some(shell) => completion(shell),
            None => {
                eprintln!("usage: reference man|bash|zsh|fish");
                std::process::exit(2);
            }
        },
    };
    print!("{text}");
}
