//! JSON-RPC framing of what a server sends (a message or a batch).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agenthealth::fuzzing::jsonrpc(data);
});
