//! Data parallelism: rayon natively, a plain loop in wasm32 (no threads there).

/// `(0..n).map(f).collect()`, in parallel when the `native` feature is on.
pub(crate) fn par_map<R: Send, F: Fn(usize) -> R + Sync + Send>(n: usize, f: F) -> Vec<R> {
    #[cfg(feature = "native")]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().map(f).collect()
    }
    #[cfg(not(feature = "native"))]
    {
        (0..n).map(f).collect()
    }
}

/// Threads the current pool runs on (1 without `native`).
pub(crate) fn threads() -> usize {
    #[cfg(feature = "native")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "native"))]
    {
        1
    }
}
