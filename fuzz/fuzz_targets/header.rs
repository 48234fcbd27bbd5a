//! The Mcp-Name/Mcp-Param value codec and its Base64 sentinel.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        agenthealth::fuzzing::header(text);
    }
});
