//! A token endpoint's answer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agenthealth::fuzzing::oauth_token(data);
});
