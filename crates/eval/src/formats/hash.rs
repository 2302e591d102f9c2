//! A fast 64-bit docno hash computed once at parse time, so duplicate checks and qrels
//! lookups become integer probes in small per-topic tables.

use std::hash::{BuildHasherDefault, Hasher};

/// Hashes `bytes` 8 at a time, then mixes with murmur3's fmix64 finaliser so every
/// output bit depends on every input bit (the tables below use the value as is).
#[inline]
pub fn docno_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Passes an already-mixed `u64` key through unchanged.
#[derive(Default, Clone, Copy)]
pub struct PremixedHasher(u64);

impl Hasher for PremixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // only u64 keys are ever hashed here; fold anything else in to stay correct
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

pub type PremixedMap<V> = std::collections::HashMap<u64, V, BuildHasherDefault<PremixedHasher>>;
