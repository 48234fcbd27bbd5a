//! `serve`'s request heads: any bytes, cut anywhere, complete the same head, and what the
//! head parser accepts holds to the grammar. The first bytes choose up to eight cut points;
//! the rest is what the client sends.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (cuts, sent) = agenthealth::fuzzing::cuts(data);
    agenthealth::fuzzing::http_head(sent, &cuts);
});
