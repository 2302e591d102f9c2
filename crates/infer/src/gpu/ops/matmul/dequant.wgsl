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

// ---- Eight consecutive weights k..k+7 of one row (k a multiple of 8, all inside the row):
// the block's scales are read once and the quants as whole words (matmul.wgsl stages a
// weight tile 8 weights per thread). Same formulas, same operation order as the dq_* above.

// Bytes 2+i..9+i of a block as two words (blocks with a leading f16: quants start at byte 2).
fn words_at_2(base: u32, i: u32) -> vec2<u32> {
    let sw = base + i / 4u;
    let a = w[sw];
    let b = w[sw + 1u];
    let c = w[sw + 2u];
    return vec2<u32>((a >> 16u) | (b << 16u), (b >> 16u) | (c << 16u));
}

fn dq8_generic(row: u32, k: u32) -> array<f32, 8> {
    var out: array<f32, 8>;
    for (var e = 0u; e < 8u; e++) {
        out[e] = dequant(row, k + e);
    }
    return out;
}

fn dq8_f32(row: u32, k: u32) -> array<f32, 8> {
    var out: array<f32, 8>;
    for (var e = 0u; e < 8u; e++) {
        out[e] = bitcast<f32>(w[row + k + e]);
    }
    return out;
}

fn dq8_f16(row: u32, k: u32) -> array<f32, 8> {
    var out: array<f32, 8>;
    for (var e = 0u; e < 4u; e++) {
        let v = unpack2x16float(w[row + k / 2u + e]);
        out[2u * e] = v.x;
        out[2u * e + 1u] = v.y;
    }
    return out;
}

fn dq8_q8_0(row: u32, k: u32) -> array<f32, 8> {
    let base = row + (k / 32u) * 9u;
    let i = k % 32u;
    let d = unpack2x16float(w[base]).x;
    let q = words_at_2(base, i);
    var out: array<f32, 8>;
    for (var e = 0u; e < 4u; e++) {
        out[e] = f32(extractBits(bitcast<i32>(q.x), e * 8u, 8u)) * d;
        out[e + 4u] = f32(extractBits(bitcast<i32>(q.y), e * 8u, 8u)) * d;
    }
    return out;
}

fn dq8_q4_0(row: u32, k: u32) -> array<f32, 8> {
    let base = row + (k / 32u) * 5u;
    let i = k % 32u;
    let d = unpack2x16float(w[base]).x;
    let q = words_at_2(base, i % 16u);
    let sh = select(0u, 4u, i >= 16u);
    var out: array<f32, 8>;
    for (var e = 0u; e < 4u; e++) {
        out[e] = f32(i32((q.x >> (e * 8u + sh)) & 15u) - 8) * d;
        out[e + 4u] = f32(i32((q.y >> (e * 8u + sh)) & 15u) - 8) * d;
    }
    return out;
}

fn dq8_q4_1(row: u32, k: u32) -> array<f32, 8> {
    let base = row + (k / 32u) * 5u;
    let i = k % 32u;
    let dm = unpack2x16float(w[base]);
    let wi = base + 1u + (i % 16u) / 4u;
    let q0 = w[wi];
    let q1 = w[wi + 1u];
    let sh = select(0u, 4u, i >= 16u);
    var out: array<f32, 8>;
    for (var e = 0u; e < 4u; e++) {
        out[e] = f32((q0 >> (e * 8u + sh)) & 15u) * dm.x + dm.y;
        out[e + 4u] = f32((q1 >> (e * 8u + sh)) & 15u) * dm.x + dm.y;
    }
    return out;
}

fn dq8_q4_k(row: u32, k: u32) -> array<f32, 8> {
    let base = row + (k / 256u) * 36u;
    let i = k % 256u;
    let dm = unpack2x16float(w[base]);
    let chunk = i / 64u;
    let l = i % 64u;
    let sm = scale_min_k4(base, chunk * 2u + l / 32u);
    let d1 = dm.x * f32(sm.x);
    let m1 = dm.y * f32(sm.y);
    let wi = base + (16u + chunk * 32u + l % 32u) / 4u;
    let q0 = w[wi];
    let q1 = w[wi + 1u];
    let sh = select(0u, 4u, l >= 32u);
    var out: array<f32, 8>;
    for (var e = 0u; e < 4u; e++) {
        out[e] = d1 * f32((q0 >> (e * 8u + sh)) & 15u) - m1;
        out[e + 4u] = d1 * f32((q1 >> (e * 8u + sh)) & 15u) - m1;
    }
    return out;
}

fn dq8_q6_k(row: u32, k: u32) -> array<f32, 8> {
    let base = row + (k / 256u) * 53u;
    let i = k % 256u;
    let n = i / 128u;
    let r = i % 128u;
    let l = r % 32u;
    let quarter = r / 32u;
    let ql = base + (n * 64u + l + (quarter & 1u) * 32u) / 4u;
    let qh = base + (128u + n * 32u + l) / 4u;
    let lsh = select(0u, 4u, quarter >= 2u);
    let hsh = quarter * 2u;
    let sc = f32(extractBits(bitcast<i32>(byte_at(base, 192u + n * 8u + l / 16u + quarter * 2u)), 0u, 8u));
    let d = unpack2x16float(w[base + 52u]).x;
    let ds = d * sc;
    var out: array<f32, 8>;
    for (var h = 0u; h < 2u; h++) {
        let lw = w[ql + h];
        let hw = w[qh + h];
        for (var e = 0u; e < 4u; e++) {
            let q = ((lw >> (e * 8u + lsh)) & 15u) | (((hw >> (e * 8u + hsh)) & 3u) << 4u);
            out[h * 4u + e] = ds * f32(i32(q) - 32);
        }
    }
    return out;
}
