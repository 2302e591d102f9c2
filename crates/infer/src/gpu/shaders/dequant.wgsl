// Per-weight dequantization of GGUF blocks, bit-for-bit the formulas of ggml's
// dequantize_row_* (ggml-quants.c) and of the CPU twin (src/gguf/dequant.rs).
//
// Layout (see gpu/weights.rs): every GGUF block is copied unchanged but padded with zero bytes
// to a multiple of 4, so each block starts on a u32 word (Q8_0 34 -> 36 bytes, Q4_0 18 -> 20,
// Q5_0 22 -> 24, Q6_K 210 -> 212; the others are already multiples of 4). A row is its blocks
// back to back (`row_words` words). F32 rows are their words; F16/BF16 rows are pairs of halves
// per word (a row of odd length gets one padding half). WGSL has no u8, so bytes are read with
// shifts; f16 scales are decoded with unpack2x16float (core WGSL, no shader-f16 needed).
//
// The matmul shader that includes this file binds the weights as `w: array<u32>` and defines
// `fn dequant(row_base: u32, k: u32) -> f32` with one of the dq_* functions below.

fn byte_at(base: u32, i: u32) -> u32 {
    return (w[base + (i >> 2u)] >> ((i & 3u) * 8u)) & 0xffu;
}

// Low (even byte offset) or high half of a word as an f16 value.
fn half_at(base: u32, i: u32) -> f32 {
    let v = unpack2x16float(w[base + (i >> 2u)]);
    return select(v.x, v.y, (i & 2u) != 0u);
}

fn dq_f32(row: u32, k: u32) -> f32 {
    return bitcast<f32>(w[row + k]);
}

fn dq_f16(row: u32, k: u32) -> f32 {
    let v = unpack2x16float(w[row + (k >> 1u)]);
    return select(v.x, v.y, (k & 1u) != 0u);
}

fn dq_bf16(row: u32, k: u32) -> f32 {
    let word = w[row + (k >> 1u)];
    let bits = select(word << 16u, word & 0xffff0000u, (k & 1u) != 0u);
    return bitcast<f32>(bits);
}

fn dq_q8_0(row: u32, k: u32) -> f32 {
    let base = row + (k / 32u) * 9u;
    let i = k % 32u;
    let d = half_at(base, 0u);
    let q = i32(byte_at(base, 2u + i) << 24u) >> 24u;
    return f32(q) * d;
}

fn dq_q4_0(row: u32, k: u32) -> f32 {
    let base = row + (k / 32u) * 5u;
    let i = k % 32u;
    let d = half_at(base, 0u);
    let b = byte_at(base, 2u + (i % 16u));
    let q = select(b & 15u, b >> 4u, i >= 16u);
    return f32(i32(q) - 8) * d;
}

fn dq_q4_1(row: u32, k: u32) -> f32 {
    let base = row + (k / 32u) * 5u;
    let i = k % 32u;
    let dm = unpack2x16float(w[base]);
    let b = byte_at(base, 4u + (i % 16u));
    let q = select(b & 15u, b >> 4u, i >= 16u);
    return f32(q) * dm.x + dm.y;
}

fn dq_q5_0(row: u32, k: u32) -> f32 {
    let base = row + (k / 32u) * 6u;
    let i = k % 32u;
    let d = half_at(base, 0u);
    let qh = byte_at(base, 2u) | (byte_at(base, 3u) << 8u) | (byte_at(base, 4u) << 16u) | (byte_at(base, 5u) << 24u);
    let b = byte_at(base, 6u + (i % 16u));
    let q = select(b & 15u, b >> 4u, i >= 16u) | (((qh >> i) & 1u) << 4u);
    return f32(i32(q) - 16) * d;
}

fn dq_q5_1(row: u32, k: u32) -> f32 {
    let base = row + (k / 32u) * 6u;
    let i = k % 32u;
    let dm = unpack2x16float(w[base]);
    let qh = w[base + 1u];
    let b = byte_at(base, 8u + (i % 16u));
    let q = select(b & 15u, b >> 4u, i >= 16u) | (((qh >> i) & 1u) << 4u);
    return f32(q) * dm.x + dm.y;
}

// The 12 scale bytes (from byte 4) of Q4_K/Q5_K pack eight 6-bit (scale, min) pairs.
fn scale_min_k4(base: u32, j: u32) -> vec2<u32> {
    if (j < 4u) {
        return vec2<u32>(byte_at(base, 4u + j) & 63u, byte_at(base, 8u + j) & 63u);
    }
    let s = (byte_at(base, 8u + j) & 15u) | ((byte_at(base, j) >> 6u) << 4u);
    let m = (byte_at(base, 8u + j) >> 4u) | ((byte_at(base, 4u + j) >> 6u) << 4u);
    return vec2<u32>(s, m);
}

fn dq_q4_k(row: u32, k: u32) -> f32 {
    let base = row + (k / 256u) * 36u;
    let i = k % 256u;
    let dm = unpack2x16float(w[base]);
    let chunk = i / 64u;
    let l = i % 64u;
    let sm = scale_min_k4(base, chunk * 2u + l / 32u);
    let b = byte_at(base, 16u + chunk * 32u + l % 32u);
    let q = select(b & 15u, b >> 4u, l >= 32u);
    return dm.x * f32(sm.x) * f32(q) - dm.y * f32(sm.y);
}

fn dq_q5_k(row: u32, k: u32) -> f32 {
    let base = row + (k / 256u) * 44u;
    let i = k % 256u;
    let dm = unpack2x16float(w[base]);
    let chunk = i / 64u;
    let l = i % 64u;
    let lo = l % 32u;
    let sm = scale_min_k4(base, chunk * 2u + l / 32u);
    let b = byte_at(base, 48u + chunk * 32u + lo);
    let h = byte_at(base, 16u + lo);
    let bit = chunk * 2u + l / 32u;
    let q = select(b & 15u, b >> 4u, l >= 32u) + ((h >> bit) & 1u) * 16u;
    return dm.x * f32(sm.x) * f32(q) - dm.y * f32(sm.y);
}

fn dq_q6_k(row: u32, k: u32) -> f32 {
    let base = row + (k / 256u) * 53u;
    let i = k % 256u;
    let n = i / 128u;
    let r = i % 128u;
    let l = r % 32u;
    let quarter = r / 32u;
    let ql_off = n * 64u + l + (quarter & 1u) * 32u;
    let qlb = byte_at(base, ql_off);
    let lowq = select(qlb & 15u, qlb >> 4u, quarter >= 2u);
    let qh = (byte_at(base, 128u + n * 32u + l) >> (quarter * 2u)) & 3u;
    let q = i32(lowq | (qh << 4u)) - 32;
    let sc = i32(byte_at(base, 192u + n * 8u + l / 16u + quarter * 2u) << 24u) >> 24u;
    let d = half_at(base, 208u);
    return d * f32(sc) * f32(q);
}
