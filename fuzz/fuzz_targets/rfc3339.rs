//! RFC 3339 timestamps: what parses round-trips through formatting.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        agenthealth::fuzzing::rfc3339(text);
    }
});
