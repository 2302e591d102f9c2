//! The heap of a large evaluation on transparent huge pages.
//!
//! Parsing a run allocates about a byte of result entries and docnos per byte of run file,
//! written once, front to back. On 4 KiB pages every one of those pages costs a page fault (trap,
//! zeroing, memory-cgroup charge): with the run file mapped, 9,100 of them were left in the
//! 35 MB benchmark, about 21 ms of its 125 ms of CPU. Linux backs a region with 2 MiB pages
//! when it is `madvise(MADV_HUGEPAGE)`d (what `/sys/kernel/mm/transparent_hugepage/enabled`
//! set to `madvise`, the usual default, asks for), which cut that to about 750 faults and the
//! system time from ≈ 36 to ≈ 16 ms. Only for inputs of 8 to 64 MB: see `SIZES`.
//!
//! glibc's own switch for this (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`) can only be set in
//! the environment before the process starts, so this does by hand what it does: grow the
//! main heap once by about what the inputs will need (address space only: untouched pages
//! cost nothing), mark that range for huge pages, and keep every thread on the main heap so
//! the parsing threads allocate from it too. glibc-on-Linux only; elsewhere a no-op.
//!
//! Opt-in (`RAGSCOPE_HUGE_PAGES=1`), because the gain is not dependable: in `cargo xtask bench
//! metrics` on the shared development VM (35 MB run, 9 rounds alternating with pytrec_eval)
//! `trec-eval` took a median 0.108–0.111 s of CPU with it in three runs out of five and
//! 0.154 and 0.236 s in the other two, against a steady 0.128–0.129 s without. The cause there:
//! the VM's balloon device reports free memory to the host (virtio-balloon free page reporting)
//! in blocks of 2 MiB and more, so a huge page often comes from memory the host has taken back,
//! and its first touch faults on the host too: touching 40 MB madvised for huge pages took
//! 3.6–14 ms in most runs and 85–97 ms in some, where 4 KiB pages took 15 ms every time.

/// Prepares the heap for inputs of `bytes` in all (the qrels and the largest run).
pub fn prepare_for(bytes: impl FnOnce() -> u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::grow_in_large_steps();
    // The inputs are looked at (a stat per argument) only when the user asked for huge pages.
    if std::env::var_os("RAGSCOPE_HUGE_PAGES").is_none_or(|v| v != "1") {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::prepare_for(bytes());
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bytes;
}

/// The summed sizes of those of `paths` that are regular files (0 for stdin, pipes, errors).
pub fn file_sizes<'a>(paths: impl IntoIterator<Item = &'a str>) -> u64 {
    paths
        .into_iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    const HUGE_PAGE: usize = 2 << 20;

    /// Inputs outside this range keep glibc's defaults. Below, the faults cost a millisecond or
    /// two. Above, huge pages were a loss on the development VM: with 116 MB and 290 MB runs
    /// `trec-eval` spent 0.2–0.8 s of system time zeroing them (`clear_page_erms` under
    /// `do_huge_pmd_anonymous_page`, 57 % of the samples) where 4 KiB pages took 0.17 s, and
    /// glibc's own switch did the same (0.6–0.76 s): fresh 2 MiB blocks of guest memory are
    /// slow to come by there, a few dozen are not.
    const SIZES: std::ops::Range<u64> = (8 << 20)..(64 << 20);

    /// How far glibc grows a heap past what a request needs.
    const TOP_PAD: libc::c_int = 64 << 20;

    /// Lets glibc grow its heaps in steps of [`TOP_PAD`] instead of about the size of each
    /// request. The parsing threads allocate from glibc's per-thread heaps, which it grows
    /// with an `mprotect` call per step: 2,910 of them in the 35 MB benchmark, each also
    /// splitting or merging the mapping in the kernel (`perf record`: `__mprotect` 16 % of a
    /// qrels-only profile). With this, 24. Growing reserves address space only (a page costs
    /// memory once written), and freeing then keeps up to this much for reuse, which a
    /// command that exits after one evaluation does not mind. The system time of `trec-eval`
    /// on the benchmark went from 38–43 to 30–33 ms (`perf stat -r 21`, three alternations).
    /// glibc then also keeps its mmap threshold at 128 KiB rather than raising it as large
    /// blocks are freed (setting any of these turns that off), which the same numbers include.
    pub fn grow_in_large_steps() {
        // SAFETY: mallopt only changes a malloc parameter; it is sound at any time.
        unsafe {
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
        }
    }

    pub fn prepare_for(bytes: u64) {
        if !SIZES.contains(&bytes) || !huge_pages_on_request() {
            return;
        }
        let pad = bytes.saturating_mul(2) as libc::c_int;
        // SAFETY: mallopt, malloc, free, sbrk(0) (which only reads the break) and madvise with
        // MADV_HUGEPAGE (a hint that changes no contents) are sound at any time; every pointer
        // malloc returns is freed once, and madvise gets a page-aligned range of the heap.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
            libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
            libc::mallopt(libc::M_TOP_PAD, pad);
            // The top of the heap may hold a little room already: allocate until glibc has to
            // move the break (then by the pad), and give it all back.
            let before = libc::sbrk(0) as usize;
            let mut held = Vec::with_capacity(64);
            while libc::sbrk(0) as usize == before && held.len() < 64 {
                let p = libc::malloc(64 << 10);
                if p.is_null() {
                    break;
                }
                held.push(p);
            }
            for p in held {
                libc::free(p);
            }
            let end = libc::sbrk(0) as usize;
            let start = before.next_multiple_of(HUGE_PAGE);
            let end = end - end % HUGE_PAGE;
            if end > start {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }

    /// Whether the kernel gives huge pages to a region that asks (`always` or `madvise`).
    fn huge_pages_on_request() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|s| s.contains("[always]") || s.contains("[madvise]"))
    }
}
