//! The JSON-Schema subset and x-mcp-header bindings: a schema, NUL, an instance.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agenthealth::fuzzing::schema(data);
});
