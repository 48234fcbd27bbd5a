//! How results are written (`--format`): one choice that the command line parses and the
//! output layer renders, so neither maps the other's type.

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Text for a person.
    #[default]
    Terminal,
    /// The v1 result document as JSON, 2-space indented.
    Json,
    /// The same document as YAML (keys sorted).
    Yaml,
    /// One short line per top-level target, for probes and logs.
    Line,
    /// The run as OpenMetrics text, for node_exporter's textfile collector.
    OpenMetrics,
}

impl Format {
    /// Every format, in the order help and messages list them.
    pub const ALL: [Format; 5] = [
        Format::Terminal,
        Format::Json,
        Format::Yaml,
        Format::Line,
        Format::OpenMetrics,
    ];

    /// The spelling on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Terminal => "terminal",
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Line => "line",
            Format::OpenMetrics => "openmetrics",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_round_trip_and_are_exact() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.as_str()), Some(f));
        }
        assert_eq!(Format::parse("JSON"), None);
        assert_eq!(Format::parse("line"), Some(Format::Line));
    }
}
