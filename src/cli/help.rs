//! Usage text, built from the flag table and the verbs ([`super::defs`]), the exit-code table
//! ([`crate::exit::CODES`]) and the target types ([`TargetType::ALL`], [`TargetType::CHECKED`]),
//! so help cannot list a flag, a code or a type the program does not have.

use super::defs::{FLAGS, Flag, VERBS, with_options};
use crate::contract::TargetType;
use crate::exit;

/// Widest line of the usage text: it must fit an 80-column terminal.
const WIDTH: usize = 79;

/// The usage text for all verbs, or one.
pub(crate) fn usage(verb: Option<&str>) -> String {
    let mut out = String::new();
    match verb.and_then(|v| VERBS.iter().find(|(name, _, _)| *name == v)) {
        Some((name, forms, summary)) => {
            for (i, form) in forms.iter().enumerate() {
                let lead = if i == 0 { "usage:" } else { "      " };
                out.push_str(&format!("{lead} agenthealth {}\n", with_options(form)));
            }
            out.push_str(&format!("\n{summary}\n"));
            let flags: Vec<_> = FLAGS
                .iter()
                .filter(|f| f.verbs.is_empty() || f.verbs.contains(name))
                .collect();
            out.push_str("\noptions:\n");
            for f in flags {
                out.push_str(&flag_line(f));
            }
        }
        None => {
            out.push_str(concat!(
                "agenthealth ",
                env!("CARGO_PKG_VERSION"),
                "\ncan this MCP server, and what it depends on, do its work right now?\n\n"
            ));
            out.push_str("usage:\n");
            for (_, forms, summary) in VERBS {
                for form in *forms {
                    out.push_str(&format!("  agenthealth {form}\n"));
                }
                out.push_str(&format!("      {summary}\n"));
            }
            out.push_str("\noptions (before or after the arguments; `--` ends options):\n");
            for f in FLAGS {
                out.push_str(&flag_line(f));
            }
            out.push('\n');
            out.push_str(&types());
            out.push('\n');
            out.push_str(&exit_codes());
        }
    }
    out
}

fn flag_line(f: &Flag) -> String {
    let mut name = match f.short {
        Some(s) => format!("-{s}, --{}", f.long),
        None => format!("    --{}", f.long),
    };
    if let Some(v) = f.value_name() {
        name.push(' ');
        name.push_str(v);
    }
    let scope = if f.verbs.is_empty() || f.verbs.len() >= 3 {
        String::new()
    } else {
        format!("   ({} only)", f.verbs.join(", "))
    };
    format!("  {name}{scope}\n          {}\n", f.doc)
}

/// `types: agent … custom (adapters: http … mcp)`: every type of the contract, then the ones
/// an adapter of this build checks (the others load and report MISCONFIGURED).
fn types() -> String {
    let text = format!(
        "{} (adapters: {})",
        TargetType::names(&TargetType::ALL, " "),
        TargetType::names(&TargetType::CHECKED, " ")
    );
    fill("types: ", text.split(' ').map(str::to_string))
}

/// `exit codes: 0 HEALTHY, … 6 tool failure (…)`: a status code by its status's name (the
/// names say what they mean); the tool failure, which has no status, with its meaning.
fn exit_codes() -> String {
    let last = exit::CODES.len().saturating_sub(1);
    let items = exit::CODES.iter().enumerate().map(|(i, c)| {
        let mut item = format!("{} {}", c.code, c.name());
        if c.status.is_none() {
            item.push_str(&format!(" ({})", c.meaning));
        }
        if i < last {
            item.push(',');
        }
        item
    });
    fill("exit codes: ", items)
}

/// `label` and the `items` separated by spaces, filled greedily into lines of at most
/// [`WIDTH`] columns; an item is never split, and continuation lines are indented to the
/// label's width.
fn fill(label: &str, items: impl Iterator<Item = String>) -> String {
    let indent = " ".repeat(label.chars().count());
    let mut out = String::new();
    let mut line = label.to_string();
    let mut first = true;
    for item in items {
        if !first && line.chars().count() + 1 + item.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line.clone_from(&indent);
            first = true;
        }
        if !first {
            line.push(' ');
        }
        line.push_str(&item);
        first = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_fits_80_columns_and_lists_every_flag() {
        let u = usage(None);
        for line in u.lines() {
            assert!(line.chars().count() <= 79, "{line}");
        }
        for f in FLAGS {
            assert!(u.contains(&format!("--{}", f.long)));
        }
        assert!(usage(Some("ping")).contains("--timeout"));
        assert!(!usage(Some("check")).contains("--timeout"));
    }

    #[test]
    fn types_and_exit_codes_read_as_before() {
        assert_eq!(
            types(),
            concat!(
                "types: agent multi-agent a2a mcp tool model llm http api vector-store database\n",
                "       runtime gateway router custom (adapters: http api gateway router mcp)\n",
            )
        );
        assert_eq!(
            exit_codes(),
            concat!(
                "exit codes: 0 HEALTHY, 1 DEGRADED, 2 UNHEALTHY, 3 UNREACHABLE, 4 MISCONFIGURED,\n",
                "            5 UNKNOWN, 6 tool failure (a usage, configuration or output error)\n",
            )
        );
    }

    #[test]
    fn fill_never_splits_an_item() {
        let long = "x".repeat(90);
        let items = ["a".to_string(), long.clone(), "b".to_string()];
        assert_eq!(
            fill("l: ", items.into_iter()),
            format!("l: a\n   {long}\n   b\n")
        );
    }
}
