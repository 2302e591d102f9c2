//! How weights sit in GPU memory: GGUF blocks unchanged, each padded with zero bytes to a whole
//! number of u32 words, so the shaders (which have no u8 type) read every block from a word
//! boundary. The weights stay quantized (Q8_0 grows 34 → 36 bytes per 32 weights, Q4_0 18 → 20,
//! Q5_0 22 → 24, Q6_K 210 → 212; the other block sizes are already multiples of 4). F32 rows
//! are their words; F16/BF16 rows hold two values per word (odd lengths get one zero half).
//! `dequant.wgsl` reads this layout; `repack_rows` is its only writer.

use crate::gguf::GgmlType;
use crate::model::Matrix;

/// Words one padded block takes (for F32/F16/BF16: `None`, rows are packed densely).
pub fn block_words(ty: GgmlType) -> Option<usize> {
    match ty {
        GgmlType::F32 | GgmlType::F16 | GgmlType::BF16 => None,
        _ => Some(ty.block_bytes().div_ceil(4)),
    }
}

/// Words one row of `cols` weights takes on the GPU.
pub fn row_words(ty: GgmlType, cols: usize) -> usize {
    match block_words(ty) {
        None => (cols * ty.block_bytes()).div_ceil(4),
        Some(bw) => cols / ty.block_size() * bw,
    }
}

/// The WGSL function that dequantizes one weight of this type (dequant.wgsl).
pub fn dequant_fn(ty: GgmlType) -> &'static str {
    match ty {
        GgmlType::F32 => "dq_f32",
        GgmlType::F16 => "dq_f16",
        GgmlType::BF16 => "dq_bf16",
        GgmlType::Q8_0 => "dq_q8_0",
        GgmlType::Q4_0 => "dq_q4_0",
        GgmlType::Q4_1 => "dq_q4_1",
        GgmlType::Q5_0 => "dq_q5_0",
        GgmlType::Q5_1 => "dq_q5_1",
        GgmlType::Q4K => "dq_q4_k",
        GgmlType::Q5K => "dq_q5_k",
        GgmlType::Q6K => "dq_q6_k",
    }
}

/// The WGSL function that dequantizes 8 consecutive weights at once (dequant.wgsl's dq8_*),
/// where one is written for the type; the others use `dq8_generic` (8 calls of `dequant_fn`).
pub fn dequant8_fn(ty: GgmlType) -> &'static str {
    match ty {
        GgmlType::F32 => "dq8_f32",
        GgmlType::F16 => "dq8_f16",
        GgmlType::Q8_0 => "dq8_q8_0",
        GgmlType::Q4_0 => "dq8_q4_0",
        GgmlType::Q4_1 => "dq8_q4_1",
        GgmlType::Q4K => "dq8_q4_k",
        GgmlType::Q6K => "dq8_q6_k",
        _ => "dq8_generic",
    }
}

/// `ty`'s place in [`GPU_TYPES`]. An exhaustive match, so a `GgmlType` added to the CPU engine
/// fails to compile here until the GPU path has a slot for it (the kernel tables are arrays
/// indexed by this, and cannot miss a type).
pub const fn gpu_type_index(ty: GgmlType) -> usize {
    match ty {
        GgmlType::F32 => 0,
        GgmlType::F16 => 1,
        GgmlType::BF16 => 2,
        GgmlType::Q8_0 => 3,
        GgmlType::Q4_0 => 4,
        GgmlType::Q4_1 => 5,
        GgmlType::Q5_0 => 6,
        GgmlType::Q5_1 => 7,
        GgmlType::Q4K => 8,
        GgmlType::Q5K => 9,
        GgmlType::Q6K => 10,
    }
}

/// Every type the GPU path reads (all the CPU engine's types), in [`gpu_type_index`] order.
pub const GPU_TYPES: [GgmlType; 11] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q4K,
    GgmlType::Q5K,
    GgmlType::Q6K,
];

/// Rows `r0..r0 + n` of a matrix in the GPU layout (little-endian bytes of the u32 words).
pub fn repack_rows(m: &Matrix, r0: usize, n: usize) -> Vec<u8> {
    repack_raw(
        m.ty(),
        m.cols(),
        &m.bytes()[r0 * m.row_bytes()..(r0 + n) * m.row_bytes()],
    )
}

/// Repacks whole rows of `cols` weights given as GGUF bytes.
pub fn repack_raw(ty: GgmlType, cols: usize, src: &[u8]) -> Vec<u8> {
    let rb = ty.row_bytes(cols);
    let rw = row_words(ty, cols) * 4;
    let n = src.len().checked_div(rb).unwrap_or(0);
    let mut out = vec![0u8; n * rw];
    for (row, dst) in src.chunks_exact(rb).zip(out.chunks_exact_mut(rw)) {
        match block_words(ty) {
            None => dst[..rb].copy_from_slice(row),
            Some(bw) => {
                let bb = ty.block_bytes();
                for (blk, d) in row.chunks_exact(bb).zip(dst.chunks_exact_mut(bw * 4)) {
                    d[..bb].copy_from_slice(blk);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every type the GGUF reader accepts has its own slot in the GPU's kernel tables.
    #[test]
    fn every_weight_type_has_its_place_in_gpu_types() {
        let mut seen = 0;
        for id in 0..64 {
            if let Ok(ty) = GgmlType::from_id(id) {
                let i = gpu_type_index(ty);
                assert!(i < GPU_TYPES.len(), "{}: slot {i}", ty.name());
                assert_eq!(GPU_TYPES[i], ty, "{}", ty.name());
                seen += 1;
            }
        }
        assert_eq!(seen, GPU_TYPES.len());
    }
}
