//! The name of the setting a piece of advice tells a person to change: a configuration key
//! for a target from a file, the flag for the ad-hoc target of `ping`/`doctor <type>
//! <endpoint>` (which has no file to edit).

/// Whom the advice is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Audience {
    /// The target was given on the command line.
    pub(crate) adhoc: bool,
}

/// A setting advice may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Setting {
    /// Where a bearer token comes from.
    BearerEnv,
    /// The protocol revision pin.
    ProtocolVersion,
    /// The passive HTTP method.
    HttpMethod,
    /// The accepted HTTP statuses.
    ExpectedStatus,
    /// The endpoint.
    Endpoint,
    /// The stdio server's command.
    StdioCommand,
}

impl Audience {
    /// How this audience changes `setting`.
    pub(crate) fn name(self, setting: Setting) -> &'static str {
        match (setting, self.adhoc) {
            (Setting::BearerEnv, false) => "auth.bearer_env",
            (Setting::BearerEnv, true) => "--bearer-env",
            (Setting::ProtocolVersion, false) => "mcp.protocol_version",
            (Setting::ProtocolVersion, true) => {
                "mcp.protocol_version in a configuration file (ping and doctor take no pin)"
            }
            (Setting::HttpMethod, false) => "http.method",
            (Setting::HttpMethod, true) => {
                "http.method in a configuration file (ping and doctor send HEAD)"
            }
            (Setting::ExpectedStatus, false) => "http.expected_status",
            (Setting::ExpectedStatus, true) => "http.expected_status in a configuration file",
            (Setting::Endpoint, false) => "the endpoint",
            (Setting::Endpoint, true) => "the endpoint argument",
            (Setting::StdioCommand, false) => "mcp.stdio.command",
            (Setting::StdioCommand, true) => "the command after --",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_names_keys_and_the_command_line_flags() {
        let file = Audience { adhoc: false };
        let adhoc = Audience { adhoc: true };
        assert_eq!(file.name(Setting::BearerEnv), "auth.bearer_env");
        assert_eq!(adhoc.name(Setting::BearerEnv), "--bearer-env");
        assert_eq!(adhoc.name(Setting::StdioCommand), "the command after --");
        for s in [
            Setting::BearerEnv,
            Setting::ProtocolVersion,
            Setting::HttpMethod,
            Setting::ExpectedStatus,
            Setting::Endpoint,
            Setting::StdioCommand,
        ] {
            assert!(!file.name(s).starts_with("--"), "{s:?}");
        }
    }
}
