//! The wasm heap grown once before a large parse (the JS package and the app's workers).

/// Grows the wasm heap once to about `bytes`: one `memory.grow` instead of one per doubling of
/// the parsers' vectors (each is costly in browsers and Node: with the GC work it triggers, it
/// took over half the time of a 35 MB run in the JS package), and the allocator keeps the
/// freed block to serve the parsers from. Pages grown but never written cost no physical memory.
///
/// The first `touch` bytes are also written (zeros), so that the browser maps their pages now:
/// the app's worker does this while the browser opens the file, when it would only wait. Fresh
/// wasm memory costs its first writer about 0.5 ms a megabyte in Chromium; measured with a
/// stored parse of the 38 MB benchmark run in a worker (wasm-bindgen-test, one run of six
/// rounds): 68–93 ms into fresh memory, 56–58 ms into memory written before (the writing itself
/// took 17–23 ms).
///
/// A no-op natively, where the allocator maps large blocks on its own.
pub fn reserve_wasm_heap(bytes: usize, touch: usize) {
    if cfg!(target_arch = "wasm32") {
        // try_reserve: a file too large for the room left is no abort (the parse reports it)
        let mut heap = Vec::<u8>::new();
        let _ = heap.try_reserve_exact(bytes);
        let touch = touch.min(heap.capacity());
        heap.resize(touch, 0);
        drop(std::hint::black_box(heap));
    }
}
