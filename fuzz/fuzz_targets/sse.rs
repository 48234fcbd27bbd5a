//! The SSE parser: any bytes, cut anywhere, give the same events as in one piece. The first
//! bytes choose up to eight cut points; the rest is the stream.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let n = usize::from(data.first().copied().unwrap_or(0) % 9);
    let (head, stream) = data.split_at(data.len().min(1 + n));
    let cuts: Vec<usize> = head.iter().skip(1).map(|&b| usize::from(b) * 4).collect();
    let mut sorted = cuts;
    sorted.sort_unstable();
    agenthealth::fuzzing::sse(stream, &sorted);
});
