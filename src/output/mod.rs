//! Rendering a [`Document`]: terminal, JSON or YAML, after the single redaction pass.

pub mod doctor;
pub mod progress;
pub mod redact;
pub mod terminal;

use crate::result::document::Document;

pub use redact::Redactor;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// For a person.
    Terminal,
    /// The v1 document, 2-space indented.
    Json,
    /// The same document as YAML (keys sorted).
    Yaml,
}

impl Format {
    /// Parses `--format`.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "terminal" => Some(Format::Terminal),
            "json" => Some(Format::Json),
            "yaml" => Some(Format::Yaml),
            _ => None,
        }
    }
}

/// How the terminal renderer may decorate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// ANSI colours.
    pub color: bool,
    /// Box-drawing characters (else ASCII).
    pub unicode: bool,
}

/// Renders the document (already redacted) in `format`. `doctor` adds advice (terminal only).
pub fn render(
    doc: &Document,
    format: Format,
    style: Style,
    doctor: bool,
) -> Result<String, String> {
    match format {
        Format::Json => serde_json::to_string_pretty(doc)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|_| "cannot write health results".to_string()),
        Format::Yaml => {
            let value =
                serde_json::to_value(doc).map_err(|_| "cannot write health results".to_string())?;
            yaml_serde::to_string(&value).map_err(|_| "cannot write health results".to_string())
        }
        Format::Terminal => {
            let mut out = terminal::render(doc, style);
            if doctor {
                out.push_str(&doctor::advise(doc, style));
            }
            Ok(out)
        }
    }
}
