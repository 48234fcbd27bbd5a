//! One linear pass over the text before the YAML parser sees it: nesting is bounded before
//! its cost can grow, and YAML 1.1 forms are found so they can be refused by key path.
//!
//! * **Nesting.** libyaml's cost grows with the square of flow nesting (every token checks
//!   the possible simple key of every open level), and `yaml_serde` collects every event of
//!   the document before its own 128-level bound applies: a 200 KB file nested 40,000 levels
//!   in flow style took seconds, a megabyte of `- - - …` hundreds of MiB. This pass counts
//!   open collections — flow brackets, and block collections by their column — and stops at
//!   the first that goes past [`MAX_NESTING`], in time linear in the text.
//! * **YAML 1.1 forms.** `yaml_serde` reads `0b101` as an integer and applies `!!` tags
//!   (`!!int`, `!!str`, …) silently, where JSON and YAML 1.2's JSON schema have neither. The
//!   pass records where each such token is ([`Finding`]); the loader marks them with a tag
//!   the tree keeps, so the section readers refuse them with their key path.
//!
//! The count is a lower bound of the real depth, never above it: whatever this scanner cannot
//! place with certainty — a block scalar's content, a multi-line plain scalar, a quoted
//! scalar — is skipped, so a valid document is never refused as too deep. A finding the
//! scanner misplaced (inside a block scalar, say) does no harm either: the loader keeps the
//! marked tree only when a mark landed on a node (see `yaml::parse`).

/// The nesting bound (lists and mappings); `yaml_serde` enforces the same one.
pub(crate) const MAX_NESTING: usize = 128;

/// A YAML 1.1 form the JSON-compatible loader refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Yaml11 {
    /// A binary integer (`0b101`).
    Binary,
    /// A `!!` tag, or a verbatim `!<tag:yaml.org,2002:…>` one.
    Tag,
}

/// Where a YAML 1.1 form is: the byte range of its token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    /// What it is.
    pub kind: Yaml11,
    /// First byte of the token.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
}

/// Nesting past [`MAX_NESTING`]: where it went too deep.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooDeep {
    /// 1-based line of the collection that went past the bound.
    pub line: usize,
    /// The block mapping keys open there, outermost first (`targets`, `mcp`), as far as the
    /// scanner knows them; `[…]` for a list.
    pub path: Vec<String>,
}

/// One open block collection: its column, and for a mapping the key of its current entry.
struct Level {
    column: usize,
    key: Option<String>,
}

/// Scans `text`; the YAML 1.1 forms found, or where nesting went too deep.
pub(crate) fn scan(text: &str) -> Result<Vec<Finding>, TooDeep> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
        line: 1,
        line_start: 0,
        flow: 0,
        block: Vec::new(),
        found: Vec::new(),
    };
    s.run()?;
    Ok(s.found)
}

/// `text` with each finding marked by a local tag the tree builder recognises
/// ([`marker`]): a `!!` tag is replaced by it, a binary integer gets it in front.
pub(crate) fn mark(text: &str, found: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len() + found.len() * 32);
    let mut at = 0;
    for f in found {
        let (Some(before), Some(token)) = (text.get(at..f.start), text.get(f.start..f.end)) else {
            continue;
        };
        out.push_str(before);
        out.push('!');
        out.push_str(marker(f.kind));
        match f.kind {
            Yaml11::Tag => {}
            Yaml11::Binary => {
                out.push(' ');
                out.push_str(token);
            }
        }
        at = f.end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

/// The local tag (without its `!`) that marks a finding of `kind` in the text the parser
/// reads.
pub(crate) fn marker(kind: Yaml11) -> &'static str {
    match kind {
        Yaml11::Binary => "agenthealth.yaml11.binary",
        Yaml11::Tag => "agenthealth.yaml11.tag",
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
    /// Where the current line starts.
    line_start: usize,
    /// Open flow collections.
    flow: usize,
    /// Open block collections, outermost first.
    block: Vec<Level>,
    found: Vec<Finding>,
}

/// What the last thing on a line was, which decides how the next line is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// A structure indicator or nothing: the next line is structure.
    Open,
    /// A plain scalar value: a more indented next line continues it.
    Plain,
    /// A block scalar header (`|`, `>`): more indented next lines are its content.
    BlockScalar,
}

impl Scanner<'_> {
    fn peek(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn depth(&self) -> usize {
        self.block.len() + self.flow
    }

    fn too_deep(&self) -> TooDeep {
        let path = self
            .block
            .iter()
            .map(|l| match &l.key {
                Some(k) if shown(k) => k.clone(),
                Some(_) => "<key>".into(),
                None => "[…]".into(),
            })
            .collect();
        TooDeep {
            line: self.line,
            path,
        }
    }

    fn check_depth(&self) -> Result<(), TooDeep> {
        if self.depth() > MAX_NESTING {
            Err(self.too_deep())
        } else {
            Ok(())
        }
    }

    /// A block collection entry (`- `, `? ` or a key) at `column`: a new level unless it
    /// continues the innermost one.
    fn block_entry(&mut self, column: usize, key: Option<String>) -> Result<(), TooDeep> {
        while self.block.last().is_some_and(|l| l.column > column) {
            self.block.pop();
        }
        match self.block.last_mut() {
            Some(l) if l.column == column => {
                if key.is_some() {
                    l.key = key;
                }
                Ok(())
            }
            _ => {
                self.block.push(Level { column, key });
                self.check_depth()
            }
        }
    }

    fn run(&mut self) -> Result<(), TooDeep> {
        let mut tail = Tail::Open;
        while self.i < self.b.len() {
            let line_start = self.i;
            let indent = self.skip_spaces();
            let column = self.i - line_start;
            let c = self.peek(0);
            if c == b'\n' || c == b'\r' || c == 0 || c == b'#' {
                // Blank or comment line: changes nothing (not even a block scalar).
                self.next_line();
                continue;
            }
            if self.flow == 0 {
                let parent = self.block.last().map(|l| l.column);
                let deeper = parent.is_none_or(|p| indent > p);
                if deeper && matches!(tail, Tail::Plain | Tail::BlockScalar) {
                    // A continuation of a plain scalar, or block scalar content.
                    self.next_line();
                    continue;
                }
                if column == 0 && self.at_document_marker() {
                    self.block.clear();
                    self.next_line();
                    tail = Tail::Open;
                    continue;
                }
                if column == 0 && c == b'%' {
                    self.next_line();
                    continue;
                }
                while self.block.last().is_some_and(|l| l.column > indent) {
                    self.block.pop();
                }
            }
            tail = self.line_tokens()?;
        }
        Ok(())
    }

    /// Whether a `---` or `...` document marker starts here.
    fn at_document_marker(&self) -> bool {
        let three = self.b.get(self.i..self.i + 3);
        matches!(three, Some(b"---") | Some(b"...")) && is_blank_or_end(self.peek(3))
    }

    /// Skips spaces and tabs; returns how many.
    fn skip_spaces(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(0), b' ' | b'\t') {
            self.i += 1;
        }
        self.i - start
    }

    /// Moves past the end of the current line.
    fn next_line(&mut self) {
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
        if self.i < self.b.len() {
            self.newline();
        }
    }

    /// Steps over the `\n` at the current position.
    fn newline(&mut self) {
        self.i += 1;
        self.line += 1;
        self.line_start = self.i;
    }

    /// The column of the current position.
    fn column(&self) -> usize {
        self.i - self.line_start
    }

    /// Reads tokens up to the end of the line (flow collections may span lines, and are
    /// followed to their end); returns what the line ended with.
    fn line_tokens(&mut self) -> Result<Tail, TooDeep> {
        // Whether a node may start here (after an indicator, a key, or at the line's start).
        let mut node_start = true;
        let mut tail = Tail::Open;
        loop {
            self.skip_spaces();
            let c = self.peek(0);
            match c {
                0 => return Ok(tail),
                b'\n' => {
                    self.newline();
                    if self.flow == 0 {
                        return Ok(tail);
                    }
                    node_start = true;
                }
                b'\r' => self.i += 1,
                // Only reached after whitespace or at the start of a token: a comment.
                b'#' => self.skip_to_line_end(),
                _ => {
                    let column = self.column();
                    tail = Tail::Open;
                    node_start = match self.indicator(c, column)? {
                        Some(starts) => starts,
                        // Whatever else follows a complete node here is not ours to judge.
                        None if !node_start => {
                            self.skip_token();
                            false
                        }
                        None => self.node(c, column, &mut tail)?,
                    };
                }
            }
        }
    }

    /// Steps over a structural indicator at the current position (`-`, `?`, `:` in block
    /// context; brackets; `,` and `:` in flow) and says whether a node may start after it;
    /// `None` when `c` is none.
    fn indicator(&mut self, c: u8, column: usize) -> Result<Option<bool>, TooDeep> {
        if self.flow == 0 && matches!(c, b'-' | b'?' | b':') && is_blank_or_end(self.peek(1)) {
            if c != b':' {
                self.block_entry(column, None)?;
            }
            self.i += 1;
            return Ok(Some(true));
        }
        Ok(match c {
            b'[' | b'{' => {
                self.flow += 1;
                self.check_depth()?;
                self.i += 1;
                Some(true)
            }
            b']' | b'}' => {
                self.flow = self.flow.saturating_sub(1);
                self.i += 1;
                Some(self.key_after(column, None)?)
            }
            b',' | b':' if self.flow > 0 => {
                self.i += 1;
                Some(true)
            }
            _ => None,
        })
    }

    /// Reads the start of a node at `column` — a tag or anchor (the node follows), an alias,
    /// a quoted or plain scalar (perhaps a key), a block scalar's header — recording what
    /// YAML 1.1 would read differently and setting `tail` for a line-ending scalar. Returns
    /// whether a node may still start after it (a key's value, or the node after a tag).
    fn node(&mut self, c: u8, column: usize, tail: &mut Tail) -> Result<bool, TooDeep> {
        match c {
            b'!' | b'&' => {
                let start = self.i;
                self.skip_token();
                let token = &self.b[start..self.i];
                if token.starts_with(b"!!") || token.starts_with(b"!<") {
                    self.found.push(Finding {
                        kind: Yaml11::Tag,
                        start,
                        end: self.i,
                    });
                }
                Ok(true)
            }
            b'*' => {
                self.skip_token();
                Ok(false)
            }
            b'"' | b'\'' => {
                let key = self.quoted(c);
                self.key_after(column, key)
            }
            b'|' | b'>' if self.flow == 0 => {
                self.skip_to_line_end();
                *tail = Tail::BlockScalar;
                Ok(true)
            }
            _ => {
                let (start, end, is_key) = self.plain();
                let text = &self.b[start..end];
                if is_binary(text) {
                    self.found.push(Finding {
                        kind: Yaml11::Binary,
                        start,
                        end,
                    });
                }
                if is_key {
                    if self.flow == 0 {
                        let key = String::from_utf8_lossy(text).into_owned();
                        self.block_entry(column, Some(key))?;
                    }
                } else if self.flow == 0 {
                    *tail = Tail::Plain;
                }
                // A key's value follows it.
                Ok(is_key)
            }
        }
    }

    /// Steps to the end of the line (a comment, a block scalar's header).
    fn skip_to_line_end(&mut self) {
        while !matches!(self.peek(0), b'\n' | 0) {
            self.i += 1;
        }
    }

    /// After a quoted scalar or a flow collection that started at `column`: a `:` there
    /// makes it a mapping key (a block mapping's, outside flow). Returns whether it was one:
    /// its value follows.
    fn key_after(&mut self, column: usize, key: Option<String>) -> Result<bool, TooDeep> {
        let mut k = 0;
        while matches!(self.peek(k), b' ' | b'\t') {
            k += 1;
        }
        let next = self.peek(k + 1);
        let colon = self.peek(k) == b':'
            && (is_blank_or_end(next) || (self.flow > 0 && matches!(next, b',' | b']' | b'}')));
        if !colon {
            return Ok(false);
        }
        if self.flow == 0 {
            self.block_entry(column, key)?;
        }
        self.i += k + 1;
        Ok(true)
    }

    /// Skips a token up to whitespace (or a flow indicator inside a flow collection).
    fn skip_token(&mut self) {
        loop {
            let c = self.peek(0);
            let ends = matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0)
                || (self.flow > 0 && matches!(c, b',' | b'[' | b']' | b'{' | b'}'));
            if ends {
                return;
            }
            self.i += 1;
        }
    }

    /// A quoted scalar from its opening quote, across lines; its text when it fits on one
    /// line and has no escapes (a key's name, for messages).
    fn quoted(&mut self, quote: u8) -> Option<String> {
        let start = self.i + 1;
        self.i += 1;
        let mut simple = true;
        loop {
            match self.peek(0) {
                0 => return None,
                b'\n' => {
                    simple = false;
                    self.newline();
                }
                b'\\' if quote == b'"' => {
                    simple = false;
                    self.i += 1;
                    if self.peek(0) == b'\n' {
                        self.newline();
                    } else if self.peek(0) != 0 {
                        self.i += 1;
                    }
                }
                c if c == quote => {
                    if quote == b'\'' && self.peek(1) == b'\'' {
                        simple = false;
                        self.i += 2;
                        continue;
                    }
                    let text = &self.b[start..self.i];
                    self.i += 1;
                    return simple.then(|| String::from_utf8_lossy(text).into_owned());
                }
                _ => self.i += 1,
            }
        }
    }

    /// A plain scalar up to where it ends on this line: its byte range, and whether a `:`
    /// makes it a key.
    fn plain(&mut self) -> (usize, usize, bool) {
        let start = self.i;
        let mut end = self.i;
        let is_key = loop {
            let c = self.peek(0);
            match c {
                b'\n' | b'\r' | 0 => break false,
                b':' if is_blank_or_end(self.peek(1))
                    || (self.flow > 0 && matches!(self.peek(1), b',' | b']' | b'}')) =>
                {
                    break true;
                }
                b'#' if self.i > start && matches!(self.b[self.i - 1], b' ' | b'\t') => {
                    break false;
                }
                b',' | b'[' | b']' | b'{' | b'}' if self.flow > 0 => break false,
                b' ' | b'\t' => {}
                _ => end = self.i + 1,
            }
            self.i += 1;
        };
        if is_key {
            self.i += 1;
        } else {
            self.i = end;
        }
        (start, end, is_key)
    }
}

fn is_blank_or_end(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0)
}

/// Whether a plain scalar is an integer only YAML 1.1 has: `0b` and binary digits, signed
/// or not (what `yaml_serde` would read as a number).
fn is_binary(text: &[u8]) -> bool {
    let unsigned = text
        .strip_prefix(b"-")
        .or_else(|| text.strip_prefix(b"+"))
        .unwrap_or(text);
    unsigned
        .strip_prefix(b"0b")
        .is_some_and(|d| !d.is_empty() && d.iter().all(|c| matches!(c, b'0' | b'1')))
}

/// Whether a key can be shown in a message (a name, as key paths show them).
fn shown(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_nesting_past_the_bound_is_refused_at_once() {
        let deep = format!(
            "version: v1\ntargets: {}{}\n",
            "[".repeat(40_000),
            "]".repeat(40_000)
        );
        let started = std::time::Instant::now();
        let e = scan(&deep).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_millis(200));
        assert_eq!(e.line, 2);
        assert_eq!(e.path, ["targets"]);
        let ok = format!(
            "a: {}{}\n",
            "[".repeat(MAX_NESTING - 1),
            "]".repeat(MAX_NESTING - 1)
        );
        assert!(scan(&ok).is_ok());
        let over = format!(
            "a: {}{}\n",
            "[".repeat(MAX_NESTING),
            "]".repeat(MAX_NESTING)
        );
        assert!(
            scan(&over).is_err(),
            "the mapping and 128 lists are 129 levels"
        );
    }

    #[test]
    fn compact_block_nesting_is_counted() {
        let deep = format!("targets:\n  {}x\n", "- ".repeat(1_000_000));
        let e = scan(&deep).unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(e.path[..2], ["targets".to_string(), "[…]".to_string()]);
        let mut nested = String::new();
        for level in 0..200 {
            nested.push_str(&" ".repeat(level * 2));
            nested.push_str(&format!("k{level}:\n"));
        }
        let e = scan(&nested).unwrap_err();
        assert_eq!(e.line, MAX_NESTING + 1);
    }

    #[test]
    fn what_cannot_nest_is_not_counted() {
        let brackets = "[".repeat(300);
        for text in [
            format!("a: '{brackets}'\n"),
            format!("a: \"{brackets}\"\n"),
            format!("a: x{brackets}\n"),
            format!("a: |\n  {brackets}\n  - - - - x\nb: 1\n"),
            format!("a: >-\n  {brackets}\n\n  {brackets}\n"),
            format!("a: text\n  {brackets}\n"),
            format!("# {brackets}\na: 1 # {brackets}\n"),
            format!("a: \"multi\n  {brackets}\n  line\"\n"),
        ] {
            assert!(scan(&text).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn yaml_1_1_forms_are_found_where_they_are_nodes() {
        let text = "a: 0b101\nb: [1, -0b1, '0b1', {k: 0b11}]\nc: !!str 7\n\
                    d: !<tag:yaml.org,2002:int> 1\ne: x0b1\nf: |\n  0b1\n  !!str\ng: !local x\n\
                    h:\n  - 0b0\n";
        let found = scan(text).expect("shallow");
        let tokens: Vec<(Yaml11, &str)> = found
            .iter()
            .map(|f| (f.kind, &text[f.start..f.end]))
            .collect();
        assert_eq!(
            tokens,
            [
                (Yaml11::Binary, "0b101"),
                (Yaml11::Binary, "-0b1"),
                (Yaml11::Binary, "0b11"),
                (Yaml11::Tag, "!!str"),
                (Yaml11::Tag, "!<tag:yaml.org,2002:int>"),
                (Yaml11::Binary, "0b0"),
            ]
        );
        let marked = mark(text, &found);
        assert!(
            marked.starts_with("a: !agenthealth.yaml11.binary 0b101\n"),
            "{marked}"
        );
        assert!(
            marked.contains("c: !agenthealth.yaml11.tag 7\n"),
            "{marked}"
        );
    }
}
