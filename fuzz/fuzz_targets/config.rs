//! The configuration loader: the pre-scan, YAML, every section reader, the graph.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        agenthealth::fuzzing::config(text);
    }
});
