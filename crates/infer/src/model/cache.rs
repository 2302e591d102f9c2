//! Keys and values of one sequence (after RoPE), kept between forward passes for decoding.

use super::Model;

/// The attention keys and values a sequence has seen so far, per layer (`len × kv_dim` each).
///
/// A cache made by [`KvCache::scratch`] keeps one slot that each layer overwrites: the
/// prefill-only path (utilities) needs a layer's keys only while that layer runs, so its memory
/// stays one layer's worth instead of all of them.
#[derive(Debug, Clone)]
pub struct KvCache {
    pub(crate) k: Vec<Vec<f32>>,
    pub(crate) v: Vec<Vec<f32>>,
    len: usize,
    keep: bool,
}

impl KvCache {
    /// An empty cache that keeps every layer (for decoding).
    pub fn new(model: &Model) -> Self {
        let n = model.config.n_layer.max(1);
        KvCache {
            k: vec![Vec::new(); n],
            v: vec![Vec::new(); n],
            len: 0,
            keep: true,
        }
    }

    /// A cache for one prefill-only pass: one slot reused by every layer.
    pub(crate) fn scratch() -> Self {
        KvCache {
            k: vec![Vec::new()],
            v: vec![Vec::new()],
            len: 0,
            keep: false,
        }
    }

    /// Positions stored (the next token's position).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the cache keeps its layers between passes (decoding) or is a scratch slot.
    pub(crate) fn keeps(&self) -> bool {
        self.keep
    }

    /// The slot holding `layer`'s keys and values.
    pub(crate) fn slot(&self, layer: usize) -> usize {
        if self.keep {
            layer
        } else {
            0
        }
    }

    pub(crate) fn advance(&mut self, n: usize) {
        if self.keep {
            self.len += n;
        }
    }
}
