//! Native-only: large chunks of a run are parsed on two threads (see `RunParser::feed`).
//! wasm32 stays single-threaded; `RAGSCOPE_THREADS=1` forces it natively too.

use std::sync::OnceLock;

/// Below this, a second thread costs more than it saves.
pub(crate) const MIN_CHUNK: usize = 256 * 1024;

/// Threads a parser may use: `RAGSCOPE_THREADS` if set, else the machine's parallelism (≤ 2:
/// one split per chunk).
pub(crate) fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var("RAGSCOPE_THREADS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, 2)
    })
}

/// The offset just after the first newline at or past the middle of `chunk`, if any and
/// if it leaves something on both sides.
pub(crate) fn line_aligned_middle(chunk: &[u8]) -> Option<usize> {
    let mid = chunk.len() / 2;
    let cut = mid + memchr::memchr(b'\n', &chunk[mid..])? + 1;
    (cut < chunk.len()).then_some(cut)
}
