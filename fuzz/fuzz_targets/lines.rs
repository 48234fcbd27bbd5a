//! The stdio line framer: a child's stdout, cut anywhere, frames into the same lines within
//! the line bound. The first bytes choose up to eight cut points; the rest is the output.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (cuts, output) = agenthealth::fuzzing::cuts(data);
    agenthealth::fuzzing::lines(output, &cuts);
});
