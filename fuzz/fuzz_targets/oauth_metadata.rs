//! OAuth discovery input: a WWW-Authenticate challenge or authorization-server metadata.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agenthealth::fuzzing::oauth_metadata(data);
});
