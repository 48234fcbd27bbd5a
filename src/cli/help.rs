//! Usage text, built from [`super::FLAGS`] and [`super::VERBS`].

use super::{FLAGS, VERBS};

/// The usage text for all verbs, or one.
pub fn usage(verb: Option<&str>) -> String {
    let mut out = String::new();
    match verb.and_then(|v| VERBS.iter().find(|(name, _, _)| *name == v)) {
        Some((name, synopsis, summary)) => {
            out.push_str(&format!(
                "usage: agenthealth {synopsis} [options]\n\n{summary}\n"
            ));
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
            for (_, synopsis, summary) in VERBS {
                out.push_str(&format!("  agenthealth {synopsis}\n      {summary}\n"));
            }
            out.push_str("\noptions (before or after the arguments; `--` ends options):\n");
            for f in FLAGS {
                out.push_str(&flag_line(f));
            }
            out.push_str(concat!(
                "\ntypes: agent multi-agent a2a mcp tool model llm http api vector-store database\n",
                "       runtime gateway router custom (adapters: http api gateway router mcp)\n",
                "\nexit codes: 0 HEALTHY, 1 DEGRADED, 2 UNHEALTHY, 3 UNREACHABLE, 4 MISCONFIGURED,\n",
                "            5 UNKNOWN, 6 tool failure (usage, invalid configuration, output)\n",
            ));
        }
    }
    out
}

fn flag_line(f: &super::Flag) -> String {
    let mut name = match f.short {
        Some(s) => format!("-{s}, --{}", f.long),
        None => format!("    --{}", f.long),
    };
    if let Some(v) = f.value {
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
}
