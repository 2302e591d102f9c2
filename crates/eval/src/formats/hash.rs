//! A fast 64-bit docno hash computed once at parse time, so duplicate checks and qrels
//! lookups become integer probes in small per-topic tables.

/// A docno's 64-bit hash: short docnos (most are 5 to 16 bytes) are read as two possibly
/// overlapping words and mixed by one folded 64×64→128-bit multiply (the construction of
/// foldhash and wyhash); longer ones fold 16 bytes a step. Every output bit depends on every
/// input bit, so the tables below use the value as is. Written out here because the tables
/// key by this value directly (no `Hasher` round trip), and an earlier version that copied the
/// tail through a variable-length `memcpy` and chained five multiplies was 16 % of a profile.
#[inline]
pub fn docno_hash(bytes: &[u8]) -> u64 {
    let (a, b, n) = words(bytes);
    #[cfg(not(target_arch = "wasm32"))]
    return finish_folded(a, b, n);
    #[cfg(target_arch = "wasm32")]
    return finish_by_low_multiplies(a, b, n);
}

const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x1319_8a2e_0370_7344;
const K2: u64 = 0xa409_3822_299f_31d0;

/// The two words a docno is hashed from, and its length.
#[inline]
fn words(bytes: &[u8]) -> (u64, u64, u64) {
    let n = bytes.len();
    let (a, b) = if n >= 8 {
        if n > 16 {
            let mut acc = K2 ^ n as u64;
            let mut rest = bytes;
            while rest.len() > 16 {
                acc = folded_multiply(word64(rest, 0) ^ K0 ^ acc, word64(rest, 8) ^ K1);
                rest = &rest[16..];
            }
            (word64(bytes, n - 16) ^ acc, word64(bytes, n - 8))
        } else {
            (word64(bytes, 0), word64(bytes, n - 8))
        }
    } else if n >= 4 {
        (u64::from(word32(bytes, 0)), u64::from(word32(bytes, n - 4)))
    } else if n > 0 {
        (
            u64::from(bytes[0]) | u64::from(bytes[n / 2]) << 8,
            u64::from(bytes[n - 1]),
        )
    } else {
        (0, 0)
    };
    (a, b, n as u64)
}

/// Two folded 64×64→128-bit multiplies: one instruction each natively.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
#[inline]
fn finish_folded(a: u64, b: u64, n: u64) -> u64 {
    let h = folded_multiply(a ^ K0, b ^ K1 ^ n.rotate_left(32));
    folded_multiply(h ^ K2, K0 ^ n)
}

/// What wasm gets instead of [`finish_folded`]: wasm has no 64×64→128-bit multiply, and the
/// two folded ones cost eight `i64.mul`s with their carries (`docno_hash` was 11.6 % of a warm
/// `evaluate()` profile under Node). Three plain 64-bit multiplies: each word is scrambled by
/// an odd constant (a bijection), the halves of the two are crossed so that every bit of
/// both reaches the low 32 bits, and a multiply and a shift spread those. The tables only key
/// by the low 32 bits (`hash as u32`), and hashes are never compared across processes, so the
/// two targets need not agree.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline]
fn finish_by_low_multiplies(a: u64, b: u64, n: u64) -> u64 {
    const M0: u64 = 0x9e37_79b9_7f4a_7c15;
    const M1: u64 = 0xbf58_476d_1ce4_e5b9;
    const M2: u64 = 0x94d0_49bb_1331_11eb;
    let x = (a ^ K0).wrapping_mul(M0);
    let y = (b ^ K1 ^ n.rotate_left(32)).wrapping_mul(M1);
    let mut h = x ^ y.rotate_left(32);
    h ^= h >> 32;
    h = h.wrapping_mul(M2);
    h ^ (h >> 29)
}

#[cfg(not(target_arch = "wasm32"))]
#[inline]
fn folded_multiply(x: u64, y: u64) -> u64 {
    let full = u128::from(x) * u128::from(y);
    (full as u64) ^ ((full >> 64) as u64)
}

#[cfg(target_arch = "wasm32")]
#[inline]
fn folded_multiply(x: u64, y: u64) -> u64 {
    folded_multiply_by_halves(x, y)
}

/// [`folded_multiply`]'s value from four 32×32→64-bit products. wasm has no 64×64→128-bit
/// multiply: LLVM turns the `u128` product into a call of compiler-builtins' `__multi3`, which
/// returns its result through the stack in linear memory. That call was 7.5 % of a warm wasm
/// `evaluate()` profile (Node, 35 MB run), plus the stack-pointer work around it in the run
/// parser's duplicate check and the qrels lookups; written out inline it is a few `i64.mul`s.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline]
fn folded_multiply_by_halves(x: u64, y: u64) -> u64 {
    const LOW: u64 = 0xffff_ffff;
    let (x0, x1, y0, y1) = (x & LOW, x >> 32, y & LOW, y >> 32);
    let (p00, p01, p10, p11) = (x0 * y0, x0 * y1, x1 * y0, x1 * y1);
    // bits 32..96 of the product, before carries: below 3 * 2^32
    let mid = (p00 >> 32) + (p01 & LOW) + (p10 & LOW);
    let low = (mid << 32) | (p00 & LOW);
    let high = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    low ^ high
}

#[inline]
fn word64(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline]
fn word32(s: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&s[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Short byte strings compared without a call to `memcmp`: docnos and qids are mostly 4 to 16 bytes,
/// where the call costs more than the comparison (it was 3 % of a `trec-eval` profile).
#[inline]
pub fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let n = a.len();
    // two overlapping words cover the whole string
    match n {
        8..=16 => word64(a, 0) == word64(b, 0) && word64(a, n - 8) == word64(b, n - 8),
        4..=7 => word32(a, 0) == word32(b, 0) && word32(a, n - 4) == word32(b, n - 4),
        _ => a == b,
    }
}

/// `a.cmp(b)` (byte order, then the shorter first) without a call to `memcmp` for strings of
/// at most 16 bytes: each as two big-endian words, zero-padded, then its length. Equal words
/// mean equal bytes up to the shorter length with only zeros past it in the longer, which
/// the lengths then order as the slices' own order does. For trec_eval's tie order (docno
/// descending among equal scores): `memcmp` called from that sort was 2.3 % of a `trec-eval`
/// profile on the benchmark's run, whose 3-decimal scores tie often.
#[inline]
pub fn bytes_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    match (padded_words(a), padded_words(b)) {
        (Some(x), Some(y)) => (x, a.len()).cmp(&(y, b.len())),
        _ => a.cmp(b),
    }
}

/// The first 16 bytes of `s` as two big-endian words, zeros past its end; `None` when longer.
#[inline(always)]
fn padded_words(s: &[u8]) -> Option<(u64, u64)> {
    let n = s.len();
    let be = |at: usize| word64(s, at).swap_bytes();
    let be32 = |at: usize| u64::from(word32(s, at).swap_bytes());
    // Overlapping loads: a byte read twice lands on the same place both times (or is shifted out).
    Some(match n {
        0 => (0, 0),
        1..=3 => {
            let mut w = 0u64;
            for (i, &byte) in s.iter().enumerate() {
                w |= u64::from(byte) << (56 - 8 * i);
            }
            (w, 0)
        }
        4..=7 => (be32(0) << 32 | be32(n - 4) << (8 * (8 - n)), 0),
        8 => (be(0), 0),
        9..=16 => (be(0), be(n - 8) << (8 * (16 - n))),
        _ => return None,
    })
}

/// Appends `bytes` to `arena` as [`Vec::extend_from_slice`] does, without calling `memcpy`
/// for the usual 4–16-byte docnos: the call and its size dispatch cost more than the copy
/// (`memmove` was 2 % of a `trec-eval` profile, called once per run line). Two overlapping
/// words cover the string. Written with raw writes because the safe forms (zero-fill, copy,
/// truncate) cost 60 instructions a line more than the `memcpy` call (cachegrind).
#[inline(always)]
pub fn push_bytes(arena: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    let (head, tail, width) = match n {
        8..=16 => (word64(bytes, 0), word64(bytes, n - 8), 8),
        4..=7 => (
            u64::from(word32(bytes, 0)),
            u64::from(word32(bytes, n - 4)),
            4,
        ),
        _ => return arena.extend_from_slice(bytes),
    };
    let len = arena.len();
    // Not `reserve(16)`: an arena sized exactly for its docnos (a qrels topic's is) would
    // double for its last docno, then be copied back by `shrink_to_fit` (2.3 MB more peak
    // memory on the bench); `extend_from_slice` grows only by what is needed.
    if arena.capacity() - len < 16 {
        return arena.extend_from_slice(bytes);
    }
    // SAFETY: at least 16 bytes of room follow `len` (checked above). Both writes (of
    // `width` bytes, at offsets 0 and n - width, n <= 2 * width <= 16) land in [len, len + n)
    // and together cover it, so the n bytes `set_len` adds are initialized. `bytes` cannot
    // overlap the room: it is borrowed while `arena` is borrowed mutably.
    unsafe {
        let end = arena.as_mut_ptr().add(len);
        if width == 8 {
            end.cast::<[u8; 8]>().write_unaligned(head.to_le_bytes());
            end.add(n - 8)
                .cast::<[u8; 8]>()
                .write_unaligned(tail.to_le_bytes());
        } else {
            end.cast::<[u8; 4]>()
                .write_unaligned((head as u32).to_le_bytes());
            end.add(n - 4)
                .cast::<[u8; 4]>()
                .write_unaligned((tail as u32).to_le_bytes());
        }
        arena.set_len(len + n);
    }
}

/// Asks the CPU to bring `items` into its caches without waiting for them: a topic's qrels
/// table is cold when ranking starts (another thread built it, long before), and the first
/// probe of each of its cache lines waited for memory one at a time (a quarter of the
/// lookups' time). Prefetches never fault and change nothing, so this is only a hint. wasm32
/// has no prefetch instruction: there one load per cache line does the same, as those loads
/// do not wait on each other and their misses overlap (the wasm engine warm under Node, the
/// 38 MB benchmark run, a scratch script not kept: 6 alternating processes of 6 calls, each
/// the median of its last 5: `evaluate()` 72.8 -> 70.1 ms, the qrels
/// lookups 14.1 -> 11.5 % of a profile). Other targets go without.
#[inline]
pub fn prefetch<T>(items: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = std::mem::size_of_val(items);
        let base = items.as_ptr().cast::<i8>();
        let mut at = 0;
        while at < bytes {
            // SAFETY: `at` is inside `items`, so the pointer stays in its allocation; a
            // prefetch reads nothing the program sees and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.add(at)) };
            at += 64;
        }
    }
    #[cfg(target_arch = "wasm32")]
    {
        let step = (64 / std::mem::size_of::<T>().max(1)).max(1);
        let mut at = 0;
        while at < items.len() {
            // SAFETY: `at` is an index of `items`, so the read is inside it and aligned; read
            // as `MaybeUninit`, a padding byte is no uninitialised value. A volatile load is
            // never optimised away, though nothing uses it.
            let _line = unsafe {
                std::ptr::read_volatile(items.as_ptr().add(at).cast::<std::mem::MaybeUninit<T>>())
            };
            at += step;
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
    let _ = items;
}

/// The 32-bit tags of the docno hashes seen so far: the in-parse duplicate check only needs
/// to know whether a tag came back (then the exact check of the whole topic runs), not where,
/// so a slot is 4 bytes with a 32-bit tag, where [`DocnoIndex`] keeps 16 bits (or 32 in 8-byte
/// slots) beside a position. Its table (8 KiB for a 1,000-result
/// topic, at most half full) then mostly stays in the L1 cache beside the streaming file: its
/// probe waited on memory in a fifth of `RunParser::track`'s samples at 16 KiB.
#[derive(Debug, Clone, Default)]
pub struct TagSet {
    slots: Vec<u32>,
    len: usize,
}

impl TagSet {
    /// Empties the set and sizes it for `n` tags (keeping its memory when large enough).
    pub fn reset(&mut self, n: usize) {
        let want = (n.max(4) * 2).next_power_of_two();
        zeroed_slots(&mut self.slots, want);
        self.len = 0;
    }

    /// Adds the tag of `hash`; true when an equal tag was there already (the same docno, or
    /// one in about four billion pairs of others).
    #[inline]
    pub fn insert(&mut self, hash: u64) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        // 0 marks an empty slot: tags 0 and 1 are one tag (a false "seen" is only a slower check)
        let tag = (hash as u32).max(1);
        // the tag is the home slot too, so `grow` can re-home what it holds
        let mut at = tag as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                self.slots[at] = tag;
                self.len += 1;
                return false;
            }
            if slot == tag {
                return true;
            }
            at = (at + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![0; (old.len() * 2).max(8)];
        let mask = self.slots.len() - 1;
        for tag in old.into_iter().filter(|&t| t != 0) {
            let mut at = tag as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = tag;
        }
    }
}

/// `slots` as `want` zeros, keeping its memory when it already has that length.
fn zeroed_slots<T: Copy + Default>(slots: &mut Vec<T>, want: usize) {
    if slots.len() == want {
        slots.fill(T::default());
    } else {
        slots.clear();
        slots.resize(want, T::default());
    }
}

/// An open-addressing index from a docno's hash to a position in the caller's own list: the
/// hash's low bits beside the position + 1 in each slot (0 is empty), linear probing, at most
/// half full. Replaces a `HashMap<u64, u32>` whose growth and probing were 8–10 % of a
/// `trec-eval` profile: a miss (most lookups: 85 % of retrieved documents are not judged)
/// usually ends at the first empty slot, and the stored hash bits spare most docno comparisons.
/// Written by hand because the caller resolves equal hashes by comparing its own docnos, which
/// no map crate's key type can express without storing the docnos twice.
///
/// Slots are 4 bytes (16 hash bits, 16 position bits) while the table has at most 65,536 of
/// them and positions stay below 65,535, else 8 (32 and 32): the qrels' tables, one per topic
/// and a quarter full, were 8 of the benchmark's 13 MB of qrels structures at 8 bytes a slot.
/// The 16 stored bits are the bits that choose a slot, so a table can be rebuilt from its
/// slots alone; widening needs the full hashes again, which the caller gives (`rehash`).
#[derive(Debug, Clone)]
pub struct DocnoIndex {
    slots: Slots,
    len: usize,
    /// At most a quarter full instead of half ([`sparse`](Self::sparse)).
    sparse: bool,
}

#[derive(Debug, Clone)]
enum Slots {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Default for DocnoIndex {
    fn default() -> Self {
        DocnoIndex {
            slots: Slots::Narrow(Vec::new()),
            len: 0,
            sparse: false,
        }
    }
}

/// A slot layout: the hash bits kept and the position beside them.
trait Slot: Copy + Default + PartialEq {
    /// The largest table whose slot choice the kept bits can make.
    const MAX_SLOTS: usize;
    /// The largest position it holds.
    const MAX_POSITION: u32;
    fn new(hash: u64, position: u32) -> Self;
    /// Whether the kept bits are `hash`'s.
    fn holds(self, hash: u64) -> bool;
    fn position(self) -> u32;
    /// The kept hash bits, which choose the slot.
    fn home(self) -> usize;
}

impl Slot for u32 {
    const MAX_SLOTS: usize = 1 << 16;
    const MAX_POSITION: u32 = 0xfffe;
    #[inline]
    fn new(hash: u64, position: u32) -> Self {
        ((hash as u32) << 16) | (position + 1)
    }
    #[inline]
    fn holds(self, hash: u64) -> bool {
        self >> 16 == hash as u32 & 0xffff
    }
    #[inline]
    fn position(self) -> u32 {
        (self & 0xffff).wrapping_sub(1)
    }
    #[inline]
    fn home(self) -> usize {
        (self >> 16) as usize
    }
}

impl Slot for u64 {
    const MAX_SLOTS: usize = usize::MAX;
    const MAX_POSITION: u32 = u32::MAX - 1;
    #[inline]
    fn new(hash: u64, position: u32) -> Self {
        (u64::from(hash as u32) << 32) | u64::from(position.wrapping_add(1))
    }
    #[inline]
    fn holds(self, hash: u64) -> bool {
        (self >> 32) as u32 == hash as u32
    }
    #[inline]
    fn position(self) -> u32 {
        (self as u32).wrapping_sub(1)
    }
    #[inline]
    fn home(self) -> usize {
        (self >> 32) as usize
    }
}

/// Always inlined, as is [`DocnoIndex::find`]: the wasm build kept it a call of its own from
/// `ranked_rels`, once per ranked document (the same scratch script, 5 alternating
/// processes: `evaluate()` 69.5 -> 67.3 ms; natively `trec-eval` 0.071 -> 0.069 s of CPU).
#[inline(always)]
fn find_in<S: Slot>(slots: &[S], hash: u64, mut is_match: impl FnMut(u32) -> bool) -> Option<u32> {
    if slots.is_empty() {
        return None;
    }
    let mask = slots.len() - 1;
    let mut at = hash as usize & mask;
    loop {
        let slot = slots[at];
        if slot == S::default() {
            return None;
        }
        if slot.holds(hash) && is_match(slot.position()) {
            return Some(slot.position());
        }
        at = (at + 1) & mask;
    }
}

/// [`DocnoIndex::find_or_insert`] on a table with room for one more entry; true when stored.
#[inline]
fn find_or_insert_in<S: Slot>(
    slots: &mut [S],
    hash: u64,
    position: u32,
    mut is_match: impl FnMut(u32) -> bool,
) -> Result<u32, ()> {
    let mask = slots.len() - 1;
    let mut at = hash as usize & mask;
    loop {
        let slot = slots[at];
        if slot == S::default() {
            slots[at] = S::new(hash, position);
            return Err(());
        }
        if slot.holds(hash) && is_match(slot.position()) {
            return Ok(slot.position());
        }
        at = (at + 1) & mask;
    }
}

/// The entries of `old` in a table of `size` slots (never fewer than it holds).
fn rebuilt<S: Slot>(old: &[S], size: usize) -> Vec<S> {
    let mut slots = vec![S::default(); size];
    let mask = size - 1;
    for &slot in old.iter().filter(|&&s| s != S::default()) {
        let mut at = slot.home() & mask;
        while slots[at] != S::default() {
            at = (at + 1) & mask;
        }
        slots[at] = slot;
    }
    slots
}

impl DocnoIndex {
    /// An index kept at most a quarter full, for lookups that mostly miss (the qrels, probed
    /// by every retrieved document: 85 % are not judged): a miss then ends at its first or
    /// second slot, where half full took 2.5 on average and mispredicted the probe loop's
    /// exit (`ranked_rels` was 14 % of a `trec-eval` profile). 4 or 8 bytes a slot: at most
    /// 16 or 32 a judgment.
    pub fn sparse() -> Self {
        DocnoIndex {
            sparse: true,
            ..DocnoIndex::default()
        }
    }

    /// Slots per entry at most.
    #[inline]
    fn spread(&self) -> usize {
        if self.sparse {
            4
        } else {
            2
        }
    }

    fn size(&self) -> usize {
        match &self.slots {
            Slots::Narrow(s) => s.len(),
            Slots::Wide(s) => s.len(),
        }
    }

    /// [`prefetch`]es the table.
    #[inline]
    pub fn prefetch(&self) {
        match &self.slots {
            Slots::Narrow(s) => prefetch(s),
            Slots::Wide(s) => prefetch(s),
        }
    }

    /// Empties the index and sizes it for `n` entries (keeping its memory when large enough).
    pub fn reset(&mut self, n: usize) {
        let want = (n.max(4) * self.spread()).next_power_of_two();
        match &mut self.slots {
            Slots::Narrow(s) if want <= u32::MAX_SLOTS => zeroed_slots(s, want),
            Slots::Wide(s) => zeroed_slots(s, want),
            Slots::Narrow(_) => self.slots = Slots::Wide(vec![0; want]),
        }
        self.len = 0;
    }

    /// The position stored for `hash` whose entry `is_match` accepts.
    #[inline(always)]
    pub fn find(&self, hash: u64, is_match: impl FnMut(u32) -> bool) -> Option<u32> {
        match &self.slots {
            Slots::Narrow(s) => find_in(s, hash, is_match),
            Slots::Wide(s) => find_in(s, hash, is_match),
        }
    }

    /// The position stored for `hash` whose entry `is_match` accepts; when there is none,
    /// stores `position` (below `u32::MAX`) for `hash` and returns `None`. One probe walk
    /// where [`find`](Self::find) then an insert take two. `rehash` gives the hash of a
    /// position stored before, for when the table must take 8-byte slots.
    #[inline]
    pub fn find_or_insert(
        &mut self,
        hash: u64,
        position: u32,
        is_match: impl FnMut(u32) -> bool,
        rehash: impl Fn(u32) -> u64,
    ) -> Option<u32> {
        let full = (self.len + 1) * self.spread() > self.size();
        let narrow = matches!(self.slots, Slots::Narrow(_));
        if narrow && (position > u32::MAX_POSITION || (full && self.size() >= u32::MAX_SLOTS)) {
            self.widen(rehash);
        }
        if full {
            self.grow();
        }
        let found = match &mut self.slots {
            Slots::Narrow(s) => find_or_insert_in(s, hash, position, is_match),
            Slots::Wide(s) => find_or_insert_in(s, hash, position, is_match),
        };
        match found {
            Ok(earlier) => Some(earlier),
            Err(()) => {
                self.len += 1;
                None
            }
        }
    }

    /// Moves to 8-byte slots (the full hashes come from `rehash`).
    #[cold]
    fn widen(&mut self, rehash: impl Fn(u32) -> u64) {
        let Slots::Narrow(old) = &self.slots else {
            return;
        };
        let mut wide = vec![0u64; old.len().max(8)];
        for &slot in old.iter().filter(|&&s| s != 0) {
            let position = slot.position();
            let _ = find_or_insert_in(&mut wide, rehash(position), position, |_| false);
        }
        self.slots = Slots::Wide(wide);
    }

    fn grow(&mut self) {
        let size = (self.size() * 2).max(8);
        self.slots = match &self.slots {
            Slots::Narrow(s) => Slots::Narrow(rebuilt(s, size)),
            Slots::Wide(s) => Slots::Wide(rebuilt(s, size)),
        };
    }

    /// Gives back the slack of a table that has stopped growing (at most half full stays, or
    /// a quarter when sparse).
    pub fn shrink_to_fit(&mut self) {
        let want = (self.len.max(4) * self.spread()).next_power_of_two();
        if want < self.size() {
            self.slots = match &self.slots {
                Slots::Narrow(s) => Slots::Narrow(rebuilt(s, want)),
                Slots::Wide(s) => Slots::Wide(rebuilt(s, want)),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        bytes_cmp, bytes_eq, docno_hash, folded_multiply_by_halves, push_bytes, DocnoIndex, Slots,
        TagSet,
    };
    use proptest::prelude::*;

    proptest! {
        /// `push_bytes` appends exactly what `extend_from_slice` appends.
        #[test]
        fn push_bytes_appends_the_bytes(
            before in prop::collection::vec(any::<u8>(), 0..20),
            bytes in prop::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut want = before.clone();
            want.extend_from_slice(&bytes);
            let mut got = before;
            push_bytes(&mut got, &bytes);
            prop_assert_eq!(got, want);
        }

        /// `bytes_cmp` orders as the slices' own order does: random strings of 0 to 20 bytes
        /// from a small alphabet with zeros (so prefixes, zero padding and ties all occur),
        /// and the same string against itself with one byte changed or cut.
        #[test]
        fn bytes_cmp_is_the_slice_order(
            a in prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xff]), 0..20),
            b in prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xff]), 0..20),
            at in 0usize..20,
            byte: u8,
        ) {
            prop_assert_eq!(bytes_cmp(&a, &b), a.cmp(&b));
            let mut changed = a.clone();
            if let Some(x) = changed.get_mut(at) {
                *x = byte;
            }
            prop_assert_eq!(bytes_cmp(&a, &changed), a.as_slice().cmp(&changed));
            let cut = &a[..at.min(a.len())];
            prop_assert_eq!(bytes_cmp(&a, cut), a.as_slice().cmp(cut));
            prop_assert_eq!(bytes_cmp(cut, &a), cut.cmp(&a));
        }

        /// The wasm32 product by halves is the `u128` one, folded.
        #[test]
        fn product_by_halves_is_the_wide_product(x: u64, y: u64) {
            let full = u128::from(x) * u128::from(y);
            prop_assert_eq!(folded_multiply_by_halves(x, y), (full as u64) ^ ((full >> 64) as u64));
        }
    }

    #[test]
    fn product_by_halves_at_the_extremes() {
        for x in [
            0,
            1,
            u64::MAX,
            u64::MAX - 1,
            1 << 32,
            (1 << 32) - 1,
            1 << 63,
        ] {
            for y in [0, 1, u64::MAX, 0xffff_ffff, 1 << 32, 0x243f_6a88_85a3_08d3] {
                let full = u128::from(x) * u128::from(y);
                let want = (full as u64) ^ ((full >> 64) as u64);
                assert_eq!(folded_multiply_by_halves(x, y), want, "{x:#x} * {y:#x}");
            }
        }
    }

    type Hash = fn(&[u8]) -> u64;
    type Shape = Box<dyn Fn(u64) -> String>;

    /// The native hash and wasm's, both testable here.
    fn both_hashes() -> [(&'static str, Hash); 2] {
        fn folded(s: &[u8]) -> u64 {
            let (a, b, n) = super::words(s);
            super::finish_folded(a, b, n)
        }
        fn low(s: &[u8]) -> u64 {
            let (a, b, n) = super::words(s);
            super::finish_by_low_multiplies(a, b, n)
        }
        [("native", folded), ("wasm", low)]
    }

    #[test]
    fn hashes_of_near_docnos_differ() {
        for (name, hash) in both_hashes() {
            // every length class, and strings differing in one byte or in length only
            let mut seen = std::collections::HashSet::new();
            let mut count = 0;
            for n in 0..40usize {
                for flip in 0..n.max(1) {
                    let mut s: Vec<u8> = (0..n).map(|i| b'0' + (i % 10) as u8).collect();
                    if n > 0 {
                        s[flip] ^= 0x40;
                    }
                    seen.insert(hash(&s));
                    count += 1;
                }
            }
            assert_eq!(seen.len(), count, "{name}");
        }
    }

    /// The tables key by the low 32 bits: on docno sets shaped like real ones, they must
    /// collide about as often as random values would (n²/2³³: 1.2 in 100,000, 20 in 400,000),
    /// and the bits that pick a slot must spread them evenly.
    #[test]
    fn low_halves_collide_as_rarely_as_random_ones() {
        let sets: [(&str, Shape); 4] = [
            ("doc{i}", Box::new(|i| format!("doc{i}"))),
            ("{i:07} (MS MARCO v1)", Box::new(|i| format!("{i:07}"))),
            (
                "msmarco_passage_{shard}_{offset} (v2)",
                Box::new(|i| format!("msmarco_passage_{:02}_{}", i % 70, 1_000_000 + i * 37)),
            ),
            (
                "{doc}#{passage} (segmented)",
                Box::new(|i| {
                    format!(
                        "clueweb22-en00{:02}-{:02}-{:05}#{}",
                        i % 47,
                        i % 100,
                        i / 7,
                        i % 9
                    )
                }),
            ),
        ];
        for (name, hash) in both_hashes() {
            for (shape, docno) in &sets {
                let n = 400_000u64;
                let low: std::collections::HashSet<u32> =
                    (0..n).map(|i| hash(docno(i).as_bytes()) as u32).collect();
                let collisions = n as usize - low.len();
                assert!(
                    collisions < 60,
                    "{name} on {shape}: {collisions} collisions"
                );
                // the slot of a 1,024-slot table: every slot within 25 % of its share
                let mut slots = vec![0u32; 1024];
                for &h in &low {
                    slots[h as usize & 1023] += 1;
                }
                let share = low.len() as f64 / 1024.0;
                let worst = slots
                    .iter()
                    .map(|&c| (f64::from(c) - share).abs() / share)
                    .fold(0.0, f64::max);
                assert!(
                    worst < 0.25,
                    "{name} on {shape}: a slot {worst:.2} off its share"
                );
            }
        }
    }

    #[test]
    fn tag_set_sees_repeats_through_growth() {
        let mut set = TagSet::default();
        let hashes: Vec<u64> = (0..5000)
            .map(|i| docno_hash(format!("doc{i}").as_bytes()))
            .collect();
        for (i, &h) in hashes.iter().enumerate() {
            assert!(!set.insert(h), "{i} is new");
            assert!(set.insert(h), "{i} is a repeat");
            if i % 97 == 0 {
                assert!(set.insert(hashes[i / 2]), "an earlier one, after growth");
            }
        }
        set.reset(10);
        assert!(!set.insert(hashes[0]));
        // a tag of 0 is stored (as 1), never taken for an empty slot
        assert!(!set.insert(0));
        assert!(set.insert(0));
    }

    #[test]
    fn push_bytes_appends_exactly() {
        // an arena with exactly the room its docnos need is never grown
        let mut exact = Vec::with_capacity(9 + 12 + 5);
        for docno in [&b"doc000001"[..], b"doc000000002", b"doc03"] {
            push_bytes(&mut exact, docno);
        }
        assert_eq!(exact, b"doc000001doc000000002doc03");
        assert_eq!(exact.capacity(), 26);
        let mut arena = b"x".to_vec();
        let mut expected = arena.clone();
        for n in 0..40usize {
            let s: Vec<u8> = (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect();
            push_bytes(&mut arena, &s);
            expected.extend_from_slice(&s);
            assert_eq!(arena, expected);
        }
    }

    #[test]
    fn bytes_eq_is_slice_equality() {
        let words: Vec<Vec<u8>> = (0..40)
            .map(|n| (0..n).map(|i| b'a' + (i % 7) as u8).collect())
            .collect();
        for a in &words {
            for b in &words {
                assert_eq!(bytes_eq(a, b), a == b);
                let mut c = b.clone();
                if let Some(last) = c.last_mut() {
                    *last ^= 1;
                    assert_eq!(bytes_eq(a, &c), *a == c);
                }
            }
        }
    }

    /// The key stored at `position` when the i-th entry's position is `i * step`.
    fn key_at(stored: &[u32], step: u32, position: u32) -> Option<u32> {
        if !position.is_multiple_of(step) {
            return None;
        }
        stored.get((position / step) as usize).copied()
    }

    /// Against a map: 4-byte slots throughout, or widened to 8 by a position past 65,534, with
    /// hashes spread or crowded onto 97 values (equal kept bits everywhere).
    #[test]
    fn equals_a_map_through_narrow_and_wide_slots() {
        use proptest::prelude::*;
        let config = proptest::test_runner::Config::with_cases(200);
        proptest::proptest!(config, |(
            keys in proptest::collection::vec(0u32..3000, 1..2000),
            crowded in any::<bool>(),
            far in any::<bool>(),
            sparse in any::<bool>(),
        )| {
            let hash = |k: u32| match crowded {
                true => u64::from(k % 97).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                false => docno_hash(&k.to_le_bytes()),
            };
            // the i-th entry's position
            let step: u32 = if far { 40_000 } else { 1 };
            let mut index = if sparse { DocnoIndex::sparse() } else { DocnoIndex::default() };
            let mut model = std::collections::HashMap::new();
            let mut stored: Vec<u32> = Vec::new();
            for k in keys {
                let position = stored.len() as u32 * step;
                let key_of = |p: u32| key_at(&stored, step, p);
                let got = index.find_or_insert(
                    hash(k),
                    position,
                    |p| key_of(p) == Some(k),
                    |p| key_of(p).map_or(0, hash),
                );
                prop_assert_eq!(got, model.get(&k).copied(), "key {}", k);
                if got.is_none() {
                    model.insert(k, position);
                    stored.push(k);
                }
            }
            if far && stored.len() > 2 {
                prop_assert!(matches!(index.slots, Slots::Wide(_)));
            }
            if !far {
                prop_assert!(matches!(index.slots, Slots::Narrow(_)));
            }
            index.shrink_to_fit();
            let key_of = |p: u32| key_at(&stored, step, p);
            for (k, position) in &model {
                prop_assert_eq!(index.find(hash(*k), |p| key_of(p) == Some(*k)), Some(*position));
            }
            prop_assert_eq!(index.find(hash(5000), |p| key_of(p) == Some(5000)), None);
        });
    }

    /// More entries than 65,536 slots hold: the table widens and still finds every entry.
    #[test]
    fn a_table_past_65536_slots_widens() {
        let docnos: Vec<String> = (0..40_000).map(|i| format!("doc{i}")).collect();
        let rehash = |p: u32| docno_hash(docnos[p as usize].as_bytes());
        let mut index = DocnoIndex::default();
        for (i, d) in docnos.iter().enumerate() {
            let is_d = |p: u32| docnos.get(p as usize) == Some(d);
            assert_eq!(
                index.find_or_insert(rehash(i as u32), i as u32, is_d, rehash),
                None
            );
            if i == 30_000 {
                assert!(
                    matches!(index.slots, Slots::Narrow(_)),
                    "4-byte slots at 30,000"
                );
            }
        }
        assert!(matches!(index.slots, Slots::Wide(_)));
        for (i, d) in docnos.iter().enumerate() {
            let is_d = |p: u32| docnos.get(p as usize) == Some(d);
            assert_eq!(index.find(rehash(i as u32), is_d), Some(i as u32));
        }
    }

    #[test]
    fn finds_what_it_holds_through_growth_and_equal_hashes() {
        let docnos: Vec<String> = (0..5000).map(|i| format!("doc{i}")).collect();
        let rehash = |p: u32| match docnos.get(p as usize) {
            Some(d) => docno_hash(d.as_bytes()),
            None => 0xdead_beef,
        };
        let mut index = DocnoIndex::default();
        for (i, d) in docnos.iter().enumerate() {
            let h = docno_hash(d.as_bytes());
            assert_eq!(index.find(h, |p| docnos.get(p as usize) == Some(d)), None);
            let is_d = |p: u32| docnos.get(p as usize) == Some(d);
            assert_eq!(index.find_or_insert(h, i as u32, is_d, rehash), None);
            assert_eq!(index.find_or_insert(h, 0, is_d, rehash), Some(i as u32));
            if i < 50 {
                // the same hash for other entries: only the matching one is returned
                let p = u32::MAX - 1 - i as u32;
                assert_eq!(
                    index.find_or_insert(0xdead_beef, p, |q| q == p, rehash),
                    None
                );
            }
        }
        index.shrink_to_fit();
        for (i, d) in docnos.iter().enumerate() {
            let h = docno_hash(d.as_bytes());
            assert_eq!(
                index.find(h, |p| docnos.get(p as usize) == Some(d)),
                Some(i as u32)
            );
        }
        assert_eq!(
            index.find(0xdead_beef, |p| p == u32::MAX - 1),
            Some(u32::MAX - 1)
        );
        assert_eq!(index.find(docno_hash(b"absent"), |_| true), None);
    }
}
