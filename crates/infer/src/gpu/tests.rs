//! Each WGSL kernel against its CPU twin (twin.rs) on random inputs whose shapes do not divide
//! the tiles (64×64 and 128×128 matmul tiles, 32- and 16-wide K steps, 64-token attention
//! workgroups, 8-key tiles).
//! Without a GPU adapter (e.g. no lavapipe) each test prints `SKIPPED: ...` and asserts nothing,
//! except under `cargo xtask test`, where that fails (crate::test_support).

use super::context::{GpuContext, Kernel};
use super::engine::MatmulTile;
use super::layout::{gpu_type_index, repack_raw, row_words, GPU_TYPES};
use super::twin;
use crate::gguf::GgmlType;
use half::{bf16, f16};
use std::sync::OnceLock;
use wgpu::util::DeviceExt;

fn context() -> Option<&'static GpuContext> {
    static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
    CTX.get_or_init(|| match GpuContext::new_blocking() {
        Ok(c) => {
            eprintln!("GPU adapter: {}", c.summary);
            Some(c)
        }
        Err(e) => {
            crate::test_support::skip(&format!("no Vulkan adapter ({e})"));
            None
        }
    })
    .as_ref()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    /// Uniform in [-1, 1).
    fn f(&mut self) -> f32 {
        self.next() as f32 / (1u64 << 30) as f32 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f()).collect()
    }
}

fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs one kernel: binding 0 gets `words`, bindings 1.. the given buffers; returns buffer
/// `out` (index into `bufs`) as f32.
fn run(
    ctx: &GpuContext,
    k: &Kernel,
    words: &[u32],
    bufs: &[Vec<u8>],
    out: usize,
    groups: (u32, u32),
) -> Vec<f32> {
    run_z(ctx, k, words, bufs, out, (groups.0, groups.1, 1))
}

/// `run` with a 3-D grid.
fn run_z(
    ctx: &GpuContext,
    k: &Kernel,
    words: &[u32],
    bufs: &[Vec<u8>],
    out: usize,
    groups: (u32, u32, u32),
) -> Vec<f32> {
    let dev = &ctx.device;
    let mut w = words.to_vec();
    w.resize(8, 0);
    let params = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &bytes_u32(&w),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let buffers: Vec<wgpu::Buffer> = bufs
        .iter()
        .map(|b| {
            let mut b = b.clone();
            b.resize(b.len().max(4), 0);
            dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: &b,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
        })
        .collect();
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: params.as_entire_binding(),
    }];
    for (i, b) in buffers.iter().enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: i as u32 + 1,
            resource: b.as_entire_binding(),
        });
    }
    let bg = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &k.layout,
        entries: &entries,
    });
    let size = buffers[out].size();
    let staging = dev.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = dev.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }
    enc.copy_buffer_to_buffer(&buffers[out], 0, &staging, 0, size);
    ctx.queue.submit([enc.finish()]);
    let r = pollster::block_on(super::readback::read_f32(ctx, &staging, size));
    match r {
        Ok(v) => v,
        Err(e) => panic!("kernel failed: {e}"),
    }
}

fn assert_close(name: &str, got: &[f32], want: &[f32], rel: f64) {
    assert!(
        got.len() >= want.len(),
        "{name}: {} values, want {}",
        got.len(),
        want.len()
    );
    let scale = want
        .iter()
        .fold(0f64, |m, &v| m.max((v as f64).abs()))
        .max(1e-30);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let d = (g as f64 - w as f64).abs();
        assert!(
            d <= rel * scale && g.is_finite(),
            "{name}[{i}]: GPU {g} vs CPU twin {w} (|diff| {d:e} > {rel} × {scale})"
        );
    }
}

/// Random GGUF bytes for `rows` rows of `cols` weights of `ty`, with finite, moderate scales.
fn random_weights(rng: &mut Rng, ty: GgmlType, rows: usize, cols: usize) -> Vec<u8> {
    let n = rows * cols;
    match ty {
        GgmlType::F32 => bytes_f32(&rng.vec(n)),
        GgmlType::F16 => (0..n)
            .flat_map(|_| f16::from_f32(rng.f()).to_bits().to_le_bytes())
            .collect(),
        GgmlType::BF16 => (0..n)
            .flat_map(|_| bf16::from_f32(rng.f()).to_bits().to_le_bytes())
            .collect(),
        _ => {
            let bb = ty.block_bytes();
            let mut out: Vec<u8> = (0..rows * ty.row_bytes(cols))
                .map(|_| rng.next() as u8)
                .collect();
            let scale_at: &[usize] = match ty {
                GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
                GgmlType::Q6K => &[208],
                _ => &[0, 2],
            };
            for blk in out.chunks_exact_mut(bb) {
                for &at in scale_at {
                    let v = f16::from_f32(rng.f() * 0.05).to_bits().to_le_bytes();
                    blk[at..at + 2].copy_from_slice(&v);
                }
            }
            out
        }
    }
}

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

#[test]
fn matmul_matches_twin_for_every_weight_type() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(7);
    for ty in GPU_TYPES {
        let bs = ty.block_size();
        // Columns: not multiples of the 32-wide K step where the type allows it.
        let col_choices: Vec<usize> = match bs {
            1 => vec![37, 70],
            32 => vec![96, 160],
            _ => vec![256, 512],
        };
        for (cols, n_tok, rows) in [
            (col_choices[0], 5, 7),
            (col_choices[1], 33, 45),
            (col_choices[0], 1, 33),
            // Straddles the 64x64 tiles and the 32-wide K steps.
            (col_choices[1], 70, 65),
            // Straddles 128x128 tiles; K a multiple of the 16-wide K step for every type.
            (bs.max(64), 130, 131),
            // Straddles the wide tile's 192 rows.
            (bs.max(64), 130, 197),
        ] {
            let w = random_weights(&mut rng, ty, rows, cols);
            let x = rng.vec(n_tok * cols);
            let want = twin::matmul(ty, &w, rows, cols, &x);
            let rw = row_words(ty, cols);
            // Output written at a column offset inside a wider row, as for an LM-head chunk.
            let (stride, col0) = (rows + 3, 2);
            let words = [
                n_tok as u32,
                rows as u32,
                cols as u32,
                rw as u32,
                stride as u32,
                col0 as u32,
            ];
            let y = vec![0f32; n_tok * stride];
            // Every tile on every shape, whichever the engine would pick.
            for tile in tiles(ctx) {
                let Some(kernel) = tile.kernel(&ctx.kernels, ty) else {
                    continue;
                };
                let got = run(
                    ctx,
                    kernel,
                    &words,
                    &[repack_raw(ty, cols, &w), bytes_f32(&x), bytes_f32(&y)],
                    2,
                    tile.groups(rows, n_tok),
                );
                let got: Vec<f32> = (0..n_tok)
                    .flat_map(|t| got[t * stride + col0..t * stride + col0 + rows].to_vec())
                    .collect();
                assert_close(
                    &format!("matmul {tile:?} {} {n_tok}x{rows}x{cols}", ty.name()),
                    &got,
                    &want,
                    2e-5,
                );
            }
        }
        // Split-K on the large and wide tiles: K halves of whole 16-wide steps and blocks, two
        // output planes (n_tok x stride apart) that add up to the product.
        let (cols, n_tok, rows) = (2 * bs.max(32), 130, 197);
        let w = random_weights(&mut rng, ty, rows, cols);
        let x = rng.vec(n_tok * cols);
        let want = twin::matmul(ty, &w, rows, cols, &x);
        let (stride, col0) = (rows + 3, 2);
        let words = [
            n_tok as u32,
            rows as u32,
            cols as u32,
            row_words(ty, cols) as u32,
            stride as u32,
            col0 as u32,
            (cols / 2) as u32,
        ];
        for tile in tiles(ctx).into_iter().skip(1) {
            let Some(kernel) = tile.kernel(&ctx.kernels, ty) else {
                continue;
            };
            let (gx, gy) = tile.groups(rows, n_tok);
            let got = run_z(
                ctx,
                kernel,
                &words,
                &[
                    repack_raw(ty, cols, &w),
                    bytes_f32(&x),
                    bytes_f32(&vec![0f32; 2 * n_tok * stride]),
                ],
                2,
                (gx, gy, 2),
            );
            let plane = n_tok * stride;
            let got: Vec<f32> = (0..n_tok)
                .flat_map(|t| (0..rows).map(move |r| t * stride + col0 + r))
                .map(|i| got[i] + got[plane + i])
                .collect();
            assert_close(
                &format!(
                    "matmul {tile:?} split-K {} {n_tok}x{rows}x{cols}",
                    ty.name()
                ),
                &got,
                &want,
                2e-5,
            );
        }
    }
}

/// The matmul tiles this device runs (the wide one only where its limits fit it).
fn tiles(ctx: &GpuContext) -> Vec<MatmulTile> {
    let mut out = vec![MatmulTile::Small, MatmulTile::Large];
    if ctx.has_wide_tile() {
        out.push(MatmulTile::Wide);
    } else {
        eprintln!("SKIPPED: the wide matmul tile (this device's limits do not fit it)");
    }
    out
}

#[test]
fn split_k_only_where_the_large_tile_makes_few_workgroups() {
    let split_k = |ty, rows, n_tok, k| {
        super::engine::split_k(MatmulTile::for_shape(rows, n_tok), ty, rows, n_tok, k)
    };
    // SmolLM2-135M at 9,042 tokens: O and down (576 rows: 5 x 71 large tiles) and the fused
    // Q|K|V (960 rows: 8 x 71) split, the fused gate|up (3072 rows: 24 x 71) not, nor O and
    // down at 16,384 tokens (5 x 128); K-quant blocks of 256 do not halve 576.
    assert_eq!(split_k(GgmlType::Q4_1, 576, 9042, 1536), 2);
    assert_eq!(split_k(GgmlType::Q4_1, 576, 9042, 576), 2);
    assert_eq!(split_k(GgmlType::Q4_1, 960, 9042, 576), 2);
    assert_eq!(split_k(GgmlType::Q4_1, 576, 16384, 576), 1);
    assert_eq!(split_k(GgmlType::Q4_1, 3072, 9042, 576), 1);
    assert_eq!(split_k(GgmlType::Q4K, 576, 9042, 576), 1);
    // The small tile (192 rows, a decoding step's few tokens) never splits.
    assert_eq!(split_k(GgmlType::Q4_1, 192, 9042, 576), 1);
    assert_eq!(split_k(GgmlType::Q4_1, 576, 8, 1536), 1);
    // The wide tile: O (3 x 71 tiles) and the fused Q|K|V (5 x 71) split, gate|up (16 x 71) not.
    let wide = |rows, k| super::engine::split_k(MatmulTile::Wide, GgmlType::Q4_1, rows, 9042, k);
    assert_eq!((wide(576, 576), wide(960, 576), wide(3072, 576)), (2, 2, 1));
}

#[test]
fn rms_norm_matches_twin() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(11);
    for (rows, dim) in [(3, 70), (5, 577), (1, 8)] {
        let x: Vec<f32> = rng.vec(rows * dim).iter().map(|v| v * 3.0).collect();
        let w = rng.vec(dim);
        let want = twin::rms_norm(&x, dim, &w, 1e-5);
        let words = [rows as u32, dim as u32, 1e-5f32.to_bits(), rows as u32];
        let got = run(
            ctx,
            &ctx.kernels.rms_norm,
            &words,
            &[
                bytes_f32(&x),
                bytes_f32(&w),
                bytes_f32(&vec![0.0; rows * dim]),
            ],
            2,
            (rows as u32, 1),
        );
        assert_close(&format!("rms_norm {rows}x{dim}"), &got, &want, 1e-6);
    }
}

#[test]
fn rope_matches_twin_in_both_layouts() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(13);
    // n_rot < head_dim: partial rotation leaves the tail untouched.
    for (neox, n_tok, heads, hd, n_rot) in [
        (false, 5, 3, 10, 8),
        (true, 7, 2, 16, 16),
        (true, 3, 4, 12, 6),
    ] {
        let half = n_rot / 2;
        let max_pos = 9;
        let angles = rng.vec(max_pos * half);
        let cos: Vec<f32> = angles.iter().map(|a| (a * 3.0).cos()).collect();
        let sin: Vec<f32> = angles.iter().map(|a| (a * 3.0).sin()).collect();
        let pos: Vec<u32> = (0..n_tok).map(|_| rng.next() % max_pos as u32).collect();
        let x = rng.vec(n_tok * heads * hd);
        let mut want = x.clone();
        twin::rope(&mut want, heads, hd, n_rot, neox, &pos, &cos, &sin);
        let n = n_tok * heads * half;
        let gx = n.div_ceil(64) as u32;
        let words = [
            n_tok as u32,
            heads as u32,
            hd as u32,
            n_rot as u32,
            u32::from(neox),
            gx,
        ];
        let got = run(
            ctx,
            &ctx.kernels.rope,
            &words,
            &[
                bytes_f32(&x),
                bytes_u32(&pos),
                bytes_f32(&cos),
                bytes_f32(&sin),
            ],
            0,
            (gx, 1),
        );
        assert_close(&format!("rope neox={neox}"), &got, &want, 1e-6);
    }
}

#[test]
fn attention_matches_twin_on_packed_prompts() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(17);
    // Prompt lengths straddle the 64-token workgroups and the 8-key tiles (4 keys for 256-wide
    // heads); a sliding window (Gemma 3's local layers) shorter than some prompts.
    for (lens, n_head, n_kv, hd, window) in [
        (vec![1usize, 70, 5, 3], 4usize, 2usize, 24usize, 0usize),
        (vec![9, 130], 2, 1, 64, 0),
        (vec![3, 2], 3, 3, 128, 0),
        (vec![40, 7, 75], 2, 1, 40, 13),
        (vec![11, 6], 2, 1, 256, 5),
        (vec![20, 3], 2, 2, 136, 0),
    ] {
        let n_tok: usize = lens.iter().sum();
        let mut start = Vec::new();
        let mut s = 0u32;
        for &l in &lens {
            start.extend(std::iter::repeat_n(s, l));
            s += l as u32;
        }
        let (q_dim, kv_dim) = (n_head * hd, n_kv * hd);
        let q: Vec<f32> = rng.vec(n_tok * q_dim).iter().map(|v| v * 2.0).collect();
        let k: Vec<f32> = rng.vec(n_tok * kv_dim).iter().map(|v| v * 2.0).collect();
        let v = rng.vec(n_tok * kv_dim);
        let scale = 1.0 / (hd as f32).sqrt();
        let want = twin::attention(&q, &k, &v, &start, n_head, n_kv, hd, scale, window);
        let words = [
            n_tok as u32,
            n_head as u32,
            hd as u32,
            q_dim as u32,
            kv_dim as u32,
            (n_head / n_kv) as u32,
            scale.to_bits(),
            window as u32,
        ];
        let kernel = if hd > 128 {
            &ctx.kernels.attention_wide
        } else {
            &ctx.kernels.attention
        };
        let got = run(
            ctx,
            kernel,
            &words,
            &[
                bytes_f32(&q),
                bytes_f32(&k),
                bytes_f32(&v),
                bytes_u32(&start),
                bytes_f32(&vec![0.0; n_tok * q_dim]),
            ],
            4,
            (n_tok.div_ceil(64) as u32, n_head as u32),
        );
        assert_close(
            &format!("attention {lens:?} h{n_head}/{n_kv} d{hd} window {window}"),
            &got,
            &want,
            1e-5,
        );
    }
}

#[test]
fn elementwise_kernels_match_twins() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(19);
    let (rows, dim) = (7, 45);
    let n = rows * dim;
    let y: Vec<f32> = rng.vec(n).iter().map(|v| v * 8.0).collect();
    let a = rng.vec(n);
    let bias = rng.vec(dim);
    let idx: Vec<u32> = vec![6, 0, 3];
    let gx = n.div_ceil(64) as u32;
    let words = [n as u32, dim as u32, gx];
    let k = &ctx.kernels;
    let ew = |kern: &Kernel, y: &[f32], a: &[f32], rows_b: &[u32], n: usize| {
        let gx = n.div_ceil(64) as u32;
        run(
            ctx,
            kern,
            &[n as u32, dim as u32, gx],
            &[bytes_f32(y), bytes_f32(a), bytes_u32(rows_b)],
            0,
            (gx, 1),
        )
    };
    let _ = words;
    assert_close(
        "bias",
        &ew(&k.bias, &y, &bias, &idx, n),
        &twin::add_bias(&y, &bias),
        1e-7,
    );
    assert_close(
        "residual",
        &ew(&k.residual, &y, &a, &idx, n),
        &twin::residual(&y, &a),
        1e-7,
    );
    // Two planes of a split-K product: a holds 2n values.
    let planes = rng.vec(2 * n);
    assert_close(
        "residual_split",
        &ew(&k.residual_split, &y, &planes, &idx, n),
        &twin::residual_split(&y, &planes),
        1e-7,
    );
    assert_close(
        "swiglu",
        &ew(&k.swiglu, &y, &a, &idx, n),
        &twin::swiglu(&y, &a),
        1e-6,
    );
    let out = vec![0f32; idx.len() * dim];
    let got = ew(&k.gather, &out, &y, &idx, idx.len() * dim);
    assert_close("gather", &got, &twin::gather_rows(&y, dim, &idx), 0.0);
}

/// The fused projections' kernels: a column slice of wider rows (Q, K, V out of Q|K|V rows, on
/// a width and offsets that are no multiple of 64), SwiGLU and GeGLU over gate|up rows.
#[test]
fn fused_projection_kernels_match_twins() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(37);
    let (rows, stride) = (9usize, 45 + 2 * 13);
    let a: Vec<f32> = rng.vec(rows * stride).iter().map(|v| v * 8.0).collect();
    let k = &ctx.kernels;
    for (col, dim) in [(0usize, 45usize), (45, 13), (58, 13)] {
        let n = rows * dim;
        let gx = n.div_ceil(64) as u32;
        let got = run(
            ctx,
            &k.split,
            &[n as u32, dim as u32, gx, stride as u32, col as u32],
            &[bytes_f32(&vec![0.0; n]), bytes_f32(&a), bytes_u32(&[0])],
            0,
            (gx, 1),
        );
        let want = twin::split_cols(&a, stride, col, dim);
        assert_close(&format!("split col {col} dim {dim}"), &got, &want, 0.0);
    }
    // Two planes of a split-K product (the second rows * stride floats further) are summed.
    let planes = rng.vec(2 * rows * stride);
    let plane = rows * stride;
    let sum: Vec<f32> = (0..plane).map(|i| planes[i] + planes[plane + i]).collect();
    let (col, dim) = (45usize, 13usize);
    let n = rows * dim;
    let gx = n.div_ceil(64) as u32;
    let got = run(
        ctx,
        &k.split,
        &[
            n as u32,
            dim as u32,
            gx,
            stride as u32,
            col as u32,
            plane as u32,
        ],
        &[
            bytes_f32(&vec![0.0; n]),
            bytes_f32(&planes),
            bytes_u32(&[0]),
        ],
        0,
        (gx, 1),
    );
    let want = twin::split_cols(&sum, stride, col, dim);
    assert_close("split of two planes", &got, &want, 0.0);
    // gate|up rows of 2 x 67; values spanning GeGLU's clamps (|x| >= 10).
    let dim = 67;
    let gu: Vec<f32> = rng.vec(rows * 2 * dim).iter().map(|v| v * 12.0).collect();
    let (gate, up) = twin::halves(&gu, dim);
    let n = rows * dim;
    let gx = n.div_ceil(64) as u32;
    let halves = |kern: &Kernel| {
        run(
            ctx,
            kern,
            &[n as u32, dim as u32, gx],
            &[bytes_f32(&vec![0.0; n]), bytes_f32(&gu), bytes_u32(&[0])],
            0,
            (gx, 1),
        )
    };
    assert_close(
        "swiglu_halves",
        &halves(&k.swiglu_halves),
        &twin::swiglu(&gate, &up),
        1e-6,
    );
    // The same values through the unfused GeGLU kernel: both must agree exactly (the twin
    // comparison with its f16-rounding tolerance is scatter_and_geglu_match_twins').
    let unfused = run(
        ctx,
        &k.geglu,
        &[n as u32, dim as u32, gx],
        &[bytes_f32(&gate), bytes_f32(&up), bytes_u32(&[0])],
        0,
        (gx, 1),
    );
    let want = twin::geglu(&gate, &up);
    let got = halves(&k.geglu_halves);
    assert_eq!(&got[..n], &unfused[..n], "geglu_halves vs geglu");
    assert_close("geglu_halves", &got, &want, 2e-3);
}

#[test]
fn softmax_pick_matches_twin() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(23);
    for (rows, cols) in [(3, 1000), (1, 7), (2, 49153)] {
        let logits: Vec<f32> = rng.vec(rows * cols).iter().map(|v| v * 20.0).collect();
        let targets: Vec<u32> = (0..rows).map(|_| rng.next() % cols as u32).collect();
        let want = twin::softmax_pick(&logits, cols, &targets);
        let got = run(
            ctx,
            &ctx.kernels.softmax,
            &[rows as u32, cols as u32],
            &[
                bytes_f32(&logits),
                bytes_u32(&targets),
                bytes_f32(&vec![0.0; rows]),
            ],
            2,
            (rows as u32, 1),
        );
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            let rel = ((g - w) / w).abs();
            assert!(rel <= 1e-5, "softmax {rows}x{cols} row {i}: {g} vs {w}");
        }
    }
}

#[test]
fn decode_attention_matches_twin() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(23);
    // Cache ranges shorter and longer than the 64-key tiles, one of a single key, windowed ones
    // starting inside a prompt's rows; heads of 24, 100 and 256 values (1, 2 and 4 per thread).
    for (ranges, n_head, n_kv, hd) in [
        (
            vec![(0u32, 0u32), (5, 74), (80, 209), (210, 212)],
            4usize,
            2usize,
            24usize,
        ),
        (vec![(3, 150), (151, 151)], 2, 1, 100),
        (vec![(0, 64), (70, 77)], 2, 2, 256),
    ] {
        let rows = ranges.iter().map(|r| r.1 as usize + 1).max().unwrap_or(1) + 3;
        let n_q = ranges.len();
        let (q_dim, kv_dim) = (n_head * hd, n_kv * hd);
        let q: Vec<f32> = rng.vec(n_q * q_dim).iter().map(|v| v * 2.0).collect();
        let k: Vec<f32> = rng.vec(rows * kv_dim).iter().map(|v| v * 2.0).collect();
        let v = rng.vec(rows * kv_dim);
        let range: Vec<u32> = ranges.iter().flat_map(|&(a, b)| [a, b]).collect();
        let scale = 0.7 / (hd as f32).sqrt();
        let want = twin::decode_attention(&q, &k, &v, &range, n_head, n_kv, hd, scale);
        let words = [
            n_q as u32,
            n_head as u32,
            hd as u32,
            q_dim as u32,
            kv_dim as u32,
            (n_head / n_kv) as u32,
            scale.to_bits(),
        ];
        let got = run(
            ctx,
            &ctx.kernels.decode_attention,
            &words,
            &[
                bytes_f32(&q),
                bytes_f32(&k),
                bytes_f32(&v),
                bytes_u32(&range),
                bytes_f32(&vec![0.0; n_q * q_dim]),
            ],
            4,
            (n_q as u32, n_head as u32),
        );
        assert_close(
            &format!("decode attention {ranges:?} h{n_head}/{n_kv} d{hd}"),
            &got,
            &want,
            2e-5,
        );
    }
}

#[test]
fn argmax_matches_twin_first_on_ties() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(29);
    for (rows, cols) in [(3usize, 1000usize), (2, 37), (1, 1), (4, 70)] {
        let mut x = rng.vec(rows * cols);
        // Ties: the row maximum copied to a later column (the first must win) in two rows.
        for r in 0..rows.min(2) {
            let row = &mut x[r * cols..(r + 1) * cols];
            let best = crate::generate::argmax(row) as usize;
            row[cols - 1] = row[best];
            row[cols / 2] = row[best];
        }
        let want = twin::argmax_rows(&x, cols);
        let words = [rows as u32, cols as u32];
        let got = run(
            ctx,
            &ctx.kernels.argmax,
            &words,
            &[bytes_f32(&x), bytes_u32(&vec![0; rows])],
            1,
            (rows as u32, 1),
        );
        let got: Vec<u32> = got.iter().take(rows).map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "argmax {rows}x{cols}");
    }
}

#[test]
fn scatter_and_geglu_match_twins() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(31);
    let (n, dim, rows_total) = (5usize, 67usize, 12usize);
    let a = rng.vec(n * dim);
    let y = rng.vec(rows_total * dim);
    let dst = [7u32, 0, 11, 3, 4];
    let want = twin::scatter_rows(&y, &a, dim, &dst);
    let (gx, gy) = (((n * dim).div_ceil(64)) as u32, 1);
    let got = run(
        ctx,
        &ctx.kernels.scatter,
        &[(n * dim) as u32, dim as u32, gx],
        &[bytes_f32(&y), bytes_f32(&a), bytes_u32(&dst)],
        0,
        (gx, gy),
    );
    assert_eq!(&got[..want.len()], &want[..], "scatter");
    // GeGLU over values spanning the clamps (|x| >= 10), f16 subnormals and normal values.
    let len = 1000;
    let mut gate: Vec<f32> = rng.vec(len).iter().map(|v| v * 12.0).collect();
    gate[0] = 3.0e-6;
    gate[1] = -4.5e-7;
    gate[2] = 10.0;
    gate[3] = -10.0;
    let up = rng.vec(len);
    let want = twin::geglu(&gate, &up);
    let gx = len.div_ceil(64) as u32;
    let got = run(
        ctx,
        &ctx.kernels.geglu,
        &[len as u32, len as u32, gx],
        &[bytes_f32(&gate), bytes_f32(&up), bytes_u32(&[0])],
        0,
        (gx, 1),
    );
    // The f16 roundings make values equal; a tanh a few ulp off may flip a rounding by one f16
    // step (2^-11 relative) now and then, nothing more.
    let mut flips = 0;
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let d = (g - w).abs();
        if d > 0.0 {
            // Below -3, 1 + tanh(z) cancels in f32 (in ggml too): the bound above covers it.
            flips += usize::from(gate[i] > -3.0);
            // Below ~1e-6 the f32 cancellation in 1 + tanh(z) (ggml's too) dominates.
            assert!(
                d <= w.abs() * 1.0e-3 + 3e-7,
                "geglu[{i}] gate {}: GPU {g} vs twin {w}",
                gate[i]
            );
        }
    }
    assert!(
        flips <= len / 50,
        "geglu: {flips} of {len} values differ from the twin"
    );
}

#[test]
fn unroll_writes_out_the_marked_blocks() {
    let src = "a\n    // @unroll 3 i=#\n    x# = y[#];\n    // @end\nb\n";
    assert_eq!(
        super::context::unroll(src),
        "a\n    x0 = y[0];\n    x1 = y[1];\n    x2 = y[2];\nb\n"
    );
    let mm = super::context::matmul_source(GgmlType::Q4_1);
    assert!(mm.contains("let b31 = ") && !mm.contains("let b# ") && !mm.contains("b32"));
}

#[test]
fn matmul_plan_picks_the_large_tile_only_for_well_filled_products() {
    use MatmulTile::*;
    // SmolLM2-135M's prefill GEMMs at the native batch (9,042 tokens), the 192-row K/V ones
    // (a 128-row tile 75 % full), the LM head's few rows, a 2,048-token batch.
    assert_eq!(MatmulTile::for_shape(1536, 9042), Large);
    assert_eq!(MatmulTile::for_shape(576, 9042), Large);
    assert_eq!(MatmulTile::for_shape(192, 9042), Small);
    assert_eq!(MatmulTile::for_shape(49152, 16), Small);
    assert_eq!(MatmulTile::for_shape(576, 2048), Large);
    // Too few large tiles to fill a GPU: 2 x 16.
    assert_eq!(MatmulTile::for_shape(256, 2048), Small);
    // The wide tile where the device has it and the rows are whole 192-row tiles (SmolLM2's
    // 576, 960, 1,536 and 3,072), not Qwen2.5-0.5B's 896 rows nor the small tile's products,
    // at 16,384 tokens and more.
    assert_eq!(MatmulTile::pick(576, 32768, true), Wide);
    assert_eq!(MatmulTile::pick(3072, 16384, true), Wide);
    assert_eq!(MatmulTile::pick(576, 9042, true), Large);
    assert_eq!(MatmulTile::pick(896, 32768, true), Large);
    assert_eq!(MatmulTile::pick(192, 32768, true), Small);
    assert_eq!(MatmulTile::pick(576, 32768, false), Large);
}

#[test]
fn native_batches_follow_the_flop_and_workspace_budgets() {
    use super::engine::batch_tokens;
    use crate::model::{ModelConfig, RopeLayout};
    let cfg = |n_embd, n_ff, n_head, n_head_kv, head_dim| ModelConfig {
        arch: "llama".into(),
        n_vocab: 49152,
        n_embd,
        n_layer: 30,
        n_ff,
        n_head,
        n_head_kv,
        head_dim,
        n_rot: head_dim,
        rms_eps: 1e-5,
        rope_base: 1e4,
        rope_freq_scale: 1.0,
        rope_layout: RopeLayout::Normal,
        context_length: 8192,
        gemma: None,
    };
    // SmolLM2-135M: 7.08 MFLOP of GEMMs and 10,944 floats of activations per token. A discrete
    // GPU takes the 32,768-token cap (256 GFLOP and 1.5 GiB allow ~36k); others the 512 MiB
    // workspace: floor(2^29 / 43,776) = 12,264.
    let smol = cfg(576, 1536, 9, 3, 64);
    assert_eq!(batch_tokens(&smol, true), 32768);
    assert_eq!(batch_tokens(&smol, false), 12264);
    // Qwen2.5-0.5B: 29.8 MFLOP per token, so the FLOP budget binds: floor(2.56e11 / 29,818,880).
    let qwen = cfg(896, 4864, 14, 2, 64);
    assert_eq!(batch_tokens(&qwen, true), 8585);
    // A 7B-sized layer stays at the floor of 2,048 tokens.
    assert_eq!(batch_tokens(&cfg(4096, 14336, 32, 8, 128), true), 2048);
}
