//! Secret values: credentials and tokens, which no output may ever show.

use std::fmt;

/// A secret value. Its `Debug` never shows the value; the one place that must send it calls
/// [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("canary-123".into());
        assert!(!format!("{s:?}").contains("canary"));
        assert_eq!(s.expose(), "canary-123");
    }
}
