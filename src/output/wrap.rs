//! Filling terminal lines to the terminal's width at word boundaries: a check's evidence
//! items stay whole when they fit on a line, a longer item breaks at spaces, and a word is
//! never split (one longer than the line overflows it). Used only when stdout is a terminal
//! whose width is known ([`crate::output::Style::width`]); a pipe gets the long lines as
//! they are, for scripts and logs.

/// `lead` (already `lead_width` columns wide) followed by `items` joined by `sep`, filled into
/// lines of at most `width` columns; continuation lines start with `hang` (`hang_width`
/// columns). No trailing newline.
pub fn fill(
    lead: &str,
    lead_width: usize,
    items: &[String],
    sep: &str,
    width: usize,
    hang: (&str, usize),
) -> String {
    let mut out = String::from(lead);
    let mut col = lead_width;
    let mut fresh = true;
    for item in items {
        let len = item.chars().count();
        if !fresh && col + sep.chars().count() + len <= width {
            out.push_str(sep);
            col += sep.chars().count();
        } else if !fresh {
            out.push('\n');
            out.push_str(hang.0);
            col = hang.1;
        }
        // An item that does not fit on a line of its own breaks at spaces.
        for (i, word) in item.split(' ').enumerate() {
            let n = word.chars().count();
            if i > 0 {
                if col + 1 + n <= width {
                    out.push(' ');
                    col += 1;
                } else {
                    out.push('\n');
                    out.push_str(hang.0);
                    col = hang.1;
                }
            }
            out.push_str(word);
            col += n;
        }
        fresh = false;
    }
    out
}

/// Columns `text` takes on a terminal: characters, ANSI colour sequences (`ESC [ … m`) not
/// counted.
pub fn visible_width(text: &str) -> usize {
    let mut n = 0;
    let mut escape = false;
    for c in text.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, 'm') => escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn items_stay_whole_and_continuation_lines_hang() {
        let text = fill(
            "  capability     HEALTHY        ",
            32,
            &items(&["tools_count=18", "resources_count=2", "prompts_count=1"]),
            " · ",
            70,
            ("                                ", 32),
        );
        assert_eq!(
            text,
            "  capability     HEALTHY        tools_count=18 · resources_count=2\n\
             \x20                               prompts_count=1"
        );
        for line in text.lines() {
            assert!(line.chars().count() <= 70, "{line}");
        }
    }

    #[test]
    fn a_long_item_breaks_at_spaces_and_a_long_word_overflows() {
        let message = "required MCP tool, resource or prompt is missing";
        let long = "x".repeat(40);
        let text = fill("- ", 2, &items(&[message, &long]), " · ", 20, ("    ", 4));
        assert_eq!(
            text,
            format!(
                "- required MCP tool,\n    resource or\n    prompt is\n    missing\n    {long}"
            )
        );
        // Unwrapped, it is the same text.
        let joined: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(
            joined.join(" "),
            format!("- {message} · {long}").replace(" · ", " ")
        );
    }

    #[test]
    fn colour_sequences_take_no_columns() {
        assert_eq!(visible_width("\x1b[1;32mHEALTHY\x1b[0m  x"), 10);
        assert_eq!(visible_width("│ ├── a"), 7);
    }
}
