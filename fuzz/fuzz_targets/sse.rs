//! The SSE parser: any bytes, cut anywhere, give the same events as in one piece. The first
//! bytes choose up to eight cut points; the rest is the stream.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (cuts, stream) = agenthealth::fuzzing::cuts(data);
    agenthealth::fuzzing::sse(stream, &cuts);
});
