//! Strict YAML loading (stub; being written).

use std::fmt;
use std::path::Path;

use super::Config;

/// A configuration that cannot be loaded: names the key path and what was expected, never
/// the value.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    /// Key path such as `targets[1].timeout_ms` (empty for the document itself).
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What was expected, in our words.
    pub expected: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.expected)?;
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        Ok(())
    }
}

/// Loads a configuration file.
pub fn load_file(path: &Path) -> Result<Config, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|_| LoadError {
        path: String::new(),
        line: None,
        expected: "cannot open configuration file".into(),
    })?;
    load_str(&text)
}

/// Loads a configuration from YAML text.
pub fn load_str(_text: &str) -> Result<Config, LoadError> {
    Err(LoadError {
        path: String::new(),
        line: None,
        expected: "not implemented".into(),
    })
}
