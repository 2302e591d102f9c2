//! The prefill forward pass on the GPU: the same steps as model/forward.rs (RMSNorm → Q/K/V
//! (+bias) → RoPE → causal GQA attention → O → residual → RMSNorm → SwiGLU → residual; final
//! norm and LM head at each prompt's last position), one submit per layer.
//!
//! Weights are uploaded once per model (quantized, layout.rs); activation buffers, parameter
//! buffers and the readback buffer are kept and reused across batches, and grown only when a
//! larger batch arrives. Batches are sized from the device's real limits: no activation binding
//! exceeds maxStorageBufferBindingSize, and the LM head is split into row chunks (vocabulary
//! slices) that each fit one binding.

use super::context::{GpuContext, Kernel, Slot};
use super::error::GpuError;
use super::layout::{repack_rows, row_words};
use crate::gguf::GgmlType;
use crate::model::{Matrix, Model, ModelConfig, PrefillOutput, RopeLayout};
use std::sync::Mutex;
use wgpu::util::DeviceExt;

/// Architectures whose forward pass this engine reproduces.
pub const GPU_ARCHS: &[&str] = &["llama", "qwen2", "smollm", "mistral"];
/// Longest head the attention kernel keeps in registers (attention.wgsl MAX_HD).
pub const MAX_HEAD_DIM: usize = 128;
/// Tokens per batch at most; bounds one layer's submit (a few hundred ms of GPU time for a
/// 0.5B model on a mid-range GPU) so no submit approaches a driver's watchdog.
pub const MAX_BATCH_TOKENS: usize = 2048;

struct GpuMatrix {
    ty: GgmlType,
    rows: usize,
    cols: usize,
    row_words: usize,
    /// (buffer, first row, rows): row chunks that each fit one binding.
    chunks: Vec<(wgpu::Buffer, usize, usize)>,
}

struct GpuLayer {
    attn_norm: wgpu::Buffer,
    wq: GpuMatrix,
    wk: GpuMatrix,
    wv: GpuMatrix,
    bq: Option<wgpu::Buffer>,
    bk: Option<wgpu::Buffer>,
    bv: Option<wgpu::Buffer>,
    wo: GpuMatrix,
    ffn_norm: wgpu::Buffer,
    w_gate: GpuMatrix,
    w_up: GpuMatrix,
    w_down: GpuMatrix,
}

struct Buffers {
    cap_tok: usize,
    cap_prompts: usize,
    x: wgpu::Buffer,
    h: wgpu::Buffer,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    attn: wgpu::Buffer,
    o: wgpu::Buffer,
    gate: wgpu::Buffer,
    up: wgpu::Buffer,
    pos: wgpu::Buffer,
    start: wgpu::Buffer,
    cos: wgpu::Buffer,
    sin: wgpu::Buffer,
    last: wgpu::Buffer,
    xl: wgpu::Buffer,
    hl: wgpu::Buffer,
    logits: wgpu::Buffer,
    targets: wgpu::Buffer,
    probs: wgpu::Buffer,
    staging: wgpu::Buffer,
}

#[derive(Default)]
struct Workspace {
    bufs: Option<Buffers>,
    params: Vec<wgpu::Buffer>,
    next_param: usize,
}

/// A model's weights on one GPU device, ready for batched prefill.
pub struct GpuModel {
    ctx: GpuContext,
    cfg: ModelConfig,
    layers: Vec<GpuLayer>,
    output_norm: wgpu::Buffer,
    lm_head: GpuMatrix,
    work: Mutex<Workspace>,
    /// Tokens and prompts one batch may hold on this device.
    max_tok: usize,
    max_prompts: usize,
    uploaded_bytes: u64,
}

impl std::fmt::Debug for GpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuModel({}, {})", self.cfg.arch, self.ctx.summary)
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Output tile of one matmul workgroup: (weight rows, tokens) (shaders/matmul.wgsl TN, TM).
pub(crate) const MATMUL_TILE: (usize, usize) = (64, 64);

/// The matmul grid: x over weight-row tiles, y over token tiles.
pub(crate) fn matmul_groups(rows: usize, n_tok: usize) -> (u32, u32) {
    (
        rows.div_ceil(MATMUL_TILE.0) as u32,
        n_tok.div_ceil(MATMUL_TILE.1) as u32,
    )
}

/// Splits `n` workgroups into a 2-D grid within the 65,535-per-dimension limit.
fn grid(n: usize) -> (u32, u32) {
    let gx = n.clamp(1, 32768);
    (gx as u32, n.div_ceil(gx).max(1) as u32)
}

impl GpuModel {
    /// Checks that the GPU path covers the model, then uploads its weights (once).
    pub fn upload(ctx: GpuContext, model: &Model) -> Result<GpuModel, GpuError> {
        let cfg = model.config.clone();
        if !GPU_ARCHS.contains(&cfg.arch.as_str()) {
            return Err(GpuError::Unsupported(format!(
                "architecture '{}' (GPU: {})",
                cfg.arch,
                GPU_ARCHS.join(", ")
            )));
        }
        if cfg.head_dim > MAX_HEAD_DIM || !cfg.head_dim.is_multiple_of(4) {
            return Err(GpuError::Unsupported(format!(
                "head size {} (at most {MAX_HEAD_DIM}, a multiple of 4: attention.wgsl reads vec4s)",
                cfg.head_dim
            )));
        }
        let max_binding = ctx.max_binding() as usize;
        let widest = [cfg.n_embd, cfg.n_head * cfg.head_dim, cfg.n_ff]
            .into_iter()
            .max()
            .unwrap_or(1);
        let max_tok = (max_binding / (4 * widest)).min(MAX_BATCH_TOKENS);
        let max_prompts = (max_binding / (4 * cfg.n_vocab)).min(max_tok);
        if max_tok == 0 || max_prompts == 0 {
            return Err(GpuError::TooLarge(format!(
                "one row of activations or logits exceeds the device's {} MiB binding limit",
                max_binding >> 20
            )));
        }
        let mut uploaded = 0u64;
        let mut vector = |v: &[f32]| {
            uploaded += 4 * v.len() as u64;
            ctx.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: &f32_bytes(v),
                    usage: wgpu::BufferUsages::STORAGE,
                })
        };
        let mut layers = Vec::new();
        let views = model.layer_views();
        let mut mats = Vec::new();
        for l in &views {
            let attn_norm = vector(l.attn_norm);
            let ffn_norm = vector(l.ffn_norm);
            let bq = l.bq.map(&mut vector);
            let bk = l.bk.map(&mut vector);
            let bv = l.bv.map(&mut vector);
            mats.push((attn_norm, ffn_norm, bq, bk, bv));
        }
        let output_norm = vector(model.output_norm());
        for (l, (attn_norm, ffn_norm, bq, bk, bv)) in views.iter().zip(mats) {
            layers.push(GpuLayer {
                attn_norm,
                wq: upload_matrix(&ctx, l.wq, &mut uploaded)?,
                wk: upload_matrix(&ctx, l.wk, &mut uploaded)?,
                wv: upload_matrix(&ctx, l.wv, &mut uploaded)?,
                bq,
                bk,
                bv,
                wo: upload_matrix(&ctx, l.wo, &mut uploaded)?,
                ffn_norm,
                w_gate: upload_matrix(&ctx, l.w_gate, &mut uploaded)?,
                w_up: upload_matrix(&ctx, l.w_up, &mut uploaded)?,
                w_down: upload_matrix(&ctx, l.w_down, &mut uploaded)?,
            });
        }
        let lm_head = upload_matrix(&ctx, model.output_matrix(), &mut uploaded)?;
        if let Some(e) = ctx.take_failure() {
            return Err(GpuError::TooLarge(format!(
                "uploading {} MiB of weights failed: {e}",
                uploaded >> 20
            )));
        }
        Ok(GpuModel {
            ctx,
            cfg,
            layers,
            output_norm,
            lm_head,
            work: Mutex::new(Workspace::default()),
            max_tok,
            max_prompts,
            uploaded_bytes: uploaded,
        })
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Bytes of weights held on the device (quantized).
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded_bytes
    }

    /// How many row chunks (vocabulary slices) the LM head was split into.
    pub fn lm_head_chunks(&self) -> usize {
        self.lm_head.chunks.len()
    }

    /// Prompts one batch holds at most on this device.
    pub fn max_batch_prompts(&self) -> usize {
        self.max_prompts
    }

    /// Tokens one batch holds at most on this device.
    pub fn max_batch_tokens(&self) -> usize {
        self.max_tok
    }

    /// Natively: `prefill` blocking on the GPU.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prefill_blocking(
        &self,
        model: &Model,
        prompts: &[&[u32]],
    ) -> Result<PrefillOutput, GpuError> {
        pollster::block_on(self.prefill(model, prompts))
    }

    /// Natively: `prefill_token_probs` blocking on the GPU.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prefill_token_probs_blocking(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: &[u32],
    ) -> Result<Vec<f32>, GpuError> {
        pollster::block_on(self.prefill_token_probs(model, prompts, targets))
    }

    /// Each prompt's logits at its last position. The prompts (validated by the caller: non-empty,
    /// ids inside the vocabulary) are split into batches that fit the device; `model` supplies
    /// the token embedding rows (looked up on the host) and the RoPE tables.
    pub async fn prefill(
        &self,
        model: &Model,
        prompts: &[&[u32]],
    ) -> Result<PrefillOutput, GpuError> {
        Ok(PrefillOutput {
            last_logits: self.batches(model, prompts, None).await?,
        })
    }

    /// p(`targets[i]`) at each prompt's last position: the softmax runs on the GPU and only one
    /// float per prompt is read back (`targets.len()` must equal `prompts.len()`).
    pub async fn prefill_token_probs(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: &[u32],
    ) -> Result<Vec<f32>, GpuError> {
        if targets.len() != prompts.len() || targets.iter().any(|&t| t as usize >= self.cfg.n_vocab)
        {
            return Err(GpuError::Device(
                "one target token id inside the vocabulary per prompt is needed".into(),
            ));
        }
        let rows = self.batches(model, prompts, Some(targets)).await?;
        Ok(rows.into_iter().flatten().collect())
    }

    async fn batches(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: Option<&[u32]>,
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        for (i, p) in prompts.iter().enumerate() {
            if p.len() > self.max_tok {
                return Err(GpuError::TooLarge(format!(
                    "prompt {i} has {} tokens; one GPU batch holds at most {} on this device",
                    p.len(),
                    self.max_tok
                )));
            }
        }
        let mut out = Vec::with_capacity(prompts.len());
        let mut i = 0;
        while i < prompts.len() {
            let mut n_tok = 0;
            let mut j = i;
            while j < prompts.len()
                && j - i < self.max_prompts
                && n_tok + prompts[j].len() <= self.max_tok
            {
                n_tok += prompts[j].len();
                j += 1;
            }
            let pick = targets.map(|t| &t[i..j]);
            out.extend(self.run_batch(model, &prompts[i..j], pick).await?);
            i = j;
        }
        Ok(out)
    }

    fn ensure_buffers(&self, ws: &mut Workspace, n_tok: usize, n_prompts: usize, model: &Model) {
        if let Some(b) = &ws.bufs {
            if b.cap_tok >= n_tok && b.cap_prompts >= n_prompts {
                return;
            }
        }
        let cap_tok = n_tok.next_power_of_two().min(self.max_tok).max(n_tok);
        let cap_prompts = n_prompts
            .next_power_of_two()
            .min(self.max_prompts)
            .max(n_prompts);
        let c = &self.cfg;
        let dev = &self.ctx.device;
        let storage = |floats: usize, extra: wgpu::BufferUsages| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: (4 * floats.max(1)) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
                mapped_at_creation: false,
            })
        };
        let none = wgpu::BufferUsages::empty();
        let q_dim = c.n_head * c.head_dim;
        let kv_dim = c.n_head_kv * c.head_dim;
        let half = c.n_rot / 2;
        let (cos, sin) = model.rope_tables(cap_tok);
        let cos_b = storage(cap_tok * half, none);
        let sin_b = storage(cap_tok * half, none);
        if half > 0 {
            self.ctx.queue.write_buffer(&cos_b, 0, &f32_bytes(&cos));
            self.ctx.queue.write_buffer(&sin_b, 0, &f32_bytes(&sin));
        }
        ws.bufs = Some(Buffers {
            cap_tok,
            cap_prompts,
            x: storage(cap_tok * c.n_embd, none),
            h: storage(cap_tok * c.n_embd, none),
            q: storage(cap_tok * q_dim, none),
            k: storage(cap_tok * kv_dim, none),
            v: storage(cap_tok * kv_dim, none),
            attn: storage(cap_tok * q_dim, none),
            o: storage(cap_tok * c.n_embd, none),
            gate: storage(cap_tok * c.n_ff, none),
            up: storage(cap_tok * c.n_ff, none),
            pos: storage(cap_tok, none),
            start: storage(cap_tok, none),
            cos: cos_b,
            sin: sin_b,
            last: storage(cap_prompts, none),
            xl: storage(cap_prompts * c.n_embd, none),
            hl: storage(cap_prompts * c.n_embd, none),
            logits: storage(cap_prompts * c.n_vocab, wgpu::BufferUsages::COPY_SRC),
            targets: storage(cap_prompts, none),
            probs: storage(cap_prompts, wgpu::BufferUsages::COPY_SRC),
            staging: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("logits readback"),
                size: (4 * cap_prompts * c.n_vocab) as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        });
    }

    // The workspace guard is held across the readback on purpose (see the comment inside).
    #[allow(clippy::await_holding_lock)]
    async fn run_batch(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: Option<&[u32]>,
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        let c = &self.cfg;
        let d = c.n_embd;
        let n_tok: usize = prompts.iter().map(|p| p.len()).sum();
        let n_p = prompts.len();
        // One batch at a time per model: the workspace buffers are reused. A second concurrent
        // call (possible only from async code) gets an error instead of a deadlock.
        let mut ws = match self.work.try_lock() {
            Ok(ws) => ws,
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(GpuError::Device(
                    "another batch is running on this model; run batches one after another".into(),
                ))
            }
            Err(std::sync::TryLockError::Poisoned(_)) => {
                return Err(GpuError::Device("a previous batch panicked".into()))
            }
        };
        self.ensure_buffers(&mut ws, n_tok, n_p, model);
        ws.next_param = 0;

        // Host side: embedding rows (a lookup), positions, prompt starts, last rows.
        let mut x = vec![0f32; n_tok * d];
        let (mut pos, mut start, mut last) = (Vec::new(), Vec::new(), Vec::new());
        let mut t = 0;
        for p in prompts {
            for (i, &id) in p.iter().enumerate() {
                model
                    .token_embedding()
                    .dequantize_rows(id as usize, &mut x[(t + i) * d..(t + i + 1) * d]);
                pos.push(i as u32);
                start.push(t as u32);
            }
            t += p.len();
            last.push((t - 1) as u32);
        }
        {
            let b = ws
                .bufs
                .as_ref()
                .ok_or_else(|| GpuError::Device("no buffers".into()))?;
            let q = &self.ctx.queue;
            q.write_buffer(&b.x, 0, &f32_bytes(&x));
            q.write_buffer(&b.pos, 0, &u32_bytes(&pos));
            q.write_buffer(&b.start, 0, &u32_bytes(&start));
            q.write_buffer(&b.last, 0, &u32_bytes(&last));
            if let Some(t) = targets {
                q.write_buffer(&b.targets, 0, &u32_bytes(t));
            }
        }
        for layer in &self.layers {
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                self.encode_layer(&mut ws, &mut pass, layer, n_tok);
            }
            self.ctx.queue.submit([enc.finish()]);
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.encode_head(&mut ws, &mut pass, n_p);
            if let (Some(_), Some(b)) = (targets, ws.bufs.as_ref().map(BufRefs::of)) {
                let words = [n_p as u32, c.n_vocab as u32];
                let k = &self.ctx.kernels.softmax;
                let bufs = [&b.logits, &b.targets, &b.probs];
                self.op(&mut ws, &mut pass, k, &words, &bufs, (n_p as u32, 1));
            }
        }
        let b = ws
            .bufs
            .as_ref()
            .ok_or_else(|| GpuError::Device("no buffers".into()))?;
        let (src, width) = match targets {
            Some(_) => (&b.probs, 1),
            None => (&b.logits, c.n_vocab),
        };
        let bytes = (4 * n_p * width) as u64;
        enc.copy_buffer_to_buffer(src, 0, &b.staging, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
        let flat = super::readback::read_f32(&self.ctx, &b.staging, bytes).await?;
        if let Some(e) = self.ctx.take_failure() {
            return Err(e);
        }
        Ok(flat.chunks_exact(width).map(|r| r.to_vec()).collect())
    }

    /// Records one dispatch: `words` are the kernel's uniform parameters.
    fn op(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        k: &Kernel,
        words: &[u32],
        bufs: &[&wgpu::Buffer],
        groups: (u32, u32),
    ) {
        let dev = &self.ctx.device;
        if ws.next_param == ws.params.len() {
            ws.params.push(dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: 32,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let pb = &ws.params[ws.next_param];
        ws.next_param += 1;
        let mut w = words.to_vec();
        w.resize(8, 0);
        self.ctx.queue.write_buffer(pb, 0, &u32_bytes(&w));
        debug_assert_eq!(k.slots.len(), bufs.len() + 1);
        debug_assert_eq!(k.slots[0], Slot::Uniform);
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: pb.as_entire_binding(),
        }];
        for (i, b) in bufs.iter().enumerate() {
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
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, 1);
    }

    fn matmul(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        m: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n_tok: usize,
    ) {
        let k = &self.ctx.kernels.matmul[&m.ty];
        for (buf, r0, n) in &m.chunks {
            let words = [
                n_tok as u32,
                *n as u32,
                m.cols as u32,
                m.row_words as u32,
                m.rows as u32,
                *r0 as u32,
            ];
            self.op(ws, pass, k, &words, &[buf, x, y], matmul_groups(*n, n_tok));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn elementwise(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        k: &Kernel,
        n: usize,
        dim: usize,
        y: &wgpu::Buffer,
        a: &wgpu::Buffer,
        rows: &wgpu::Buffer,
    ) {
        let (gx, gy) = grid(n.div_ceil(64));
        self.op(
            ws,
            pass,
            k,
            &[n as u32, dim as u32, gx],
            &[y, a, rows],
            (gx, gy),
        );
    }

    fn rms_norm(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        x: &wgpu::Buffer,
        w: &wgpu::Buffer,
        y: &wgpu::Buffer,
        rows: usize,
    ) {
        let (gx, gy) = grid(rows);
        let words = [
            rows as u32,
            self.cfg.n_embd as u32,
            self.cfg.rms_eps.to_bits(),
            gx,
        ];
        self.op(
            ws,
            pass,
            &self.ctx.kernels.rms_norm,
            &words,
            &[x, w, y],
            (gx, gy),
        );
    }

    fn encode_layer(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        l: &GpuLayer,
        n_tok: usize,
    ) {
        let c = &self.cfg;
        let kn = &self.ctx.kernels;
        // Buffers are cloned handles (cheap refcounts) so `ws` can be borrowed mutably below.
        let b = match &ws.bufs {
            Some(b) => BufRefs::of(b),
            None => return,
        };
        let (d, hd) = (c.n_embd, c.head_dim);
        let q_dim = c.n_head * hd;
        let kv_dim = c.n_head_kv * hd;
        self.rms_norm(ws, pass, &b.x, &l.attn_norm, &b.h, n_tok);
        self.matmul(ws, pass, &l.wq, &b.h, &b.q, n_tok);
        self.matmul(ws, pass, &l.wk, &b.h, &b.k, n_tok);
        self.matmul(ws, pass, &l.wv, &b.h, &b.v, n_tok);
        for (bias, y, dim) in [
            (&l.bq, &b.q, q_dim),
            (&l.bk, &b.k, kv_dim),
            (&l.bv, &b.v, kv_dim),
        ] {
            if let Some(bias) = bias {
                self.elementwise(ws, pass, &kn.bias, n_tok * dim, dim, y, bias, &b.pos);
            }
        }
        let half = c.n_rot / 2;
        let neox = u32::from(c.rope_layout == RopeLayout::NeoX);
        for (y, heads) in [(&b.q, c.n_head), (&b.k, c.n_head_kv)] {
            let n = n_tok * heads * half;
            if n == 0 {
                continue;
            }
            let (gx, gy) = grid(n.div_ceil(64));
            let words = [
                n_tok as u32,
                heads as u32,
                hd as u32,
                c.n_rot as u32,
                neox,
                gx,
            ];
            self.op(
                ws,
                pass,
                &kn.rope,
                &words,
                &[y, &b.pos, &b.cos, &b.sin],
                (gx, gy),
            );
        }
        let scale = 1.0 / (hd as f32).sqrt();
        let words = [
            n_tok as u32,
            c.n_head as u32,
            hd as u32,
            q_dim as u32,
            kv_dim as u32,
            (c.n_head / c.n_head_kv) as u32,
            scale.to_bits(),
        ];
        let groups = (n_tok.div_ceil(64) as u32, c.n_head as u32);
        self.op(
            ws,
            pass,
            &kn.attention,
            &words,
            &[&b.q, &b.k, &b.v, &b.start, &b.attn],
            groups,
        );
        self.matmul(ws, pass, &l.wo, &b.attn, &b.o, n_tok);
        self.elementwise(ws, pass, &kn.residual, n_tok * d, d, &b.x, &b.o, &b.pos);
        self.rms_norm(ws, pass, &b.x, &l.ffn_norm, &b.h, n_tok);
        self.matmul(ws, pass, &l.w_gate, &b.h, &b.gate, n_tok);
        self.matmul(ws, pass, &l.w_up, &b.h, &b.up, n_tok);
        let ff = c.n_ff;
        self.elementwise(ws, pass, &kn.swiglu, n_tok * ff, ff, &b.gate, &b.up, &b.pos);
        self.matmul(ws, pass, &l.w_down, &b.gate, &b.o, n_tok);
        self.elementwise(ws, pass, &kn.residual, n_tok * d, d, &b.x, &b.o, &b.pos);
    }

    fn encode_head(&self, ws: &mut Workspace, pass: &mut wgpu::ComputePass<'_>, n_p: usize) {
        let d = self.cfg.n_embd;
        let b = match &ws.bufs {
            Some(b) => BufRefs::of(b),
            None => return,
        };
        let kn = &self.ctx.kernels;
        self.elementwise(ws, pass, &kn.gather, n_p * d, d, &b.xl, &b.x, &b.last);
        self.rms_norm(ws, pass, &b.xl, &self.output_norm, &b.hl, n_p);
        self.matmul(ws, pass, &self.lm_head, &b.hl, &b.logits, n_p);
    }
}

/// Handles to the workspace buffers (wgpu buffers are reference-counted handles).
struct BufRefs {
    x: wgpu::Buffer,
    h: wgpu::Buffer,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    attn: wgpu::Buffer,
    o: wgpu::Buffer,
    gate: wgpu::Buffer,
    up: wgpu::Buffer,
    pos: wgpu::Buffer,
    start: wgpu::Buffer,
    cos: wgpu::Buffer,
    sin: wgpu::Buffer,
    last: wgpu::Buffer,
    xl: wgpu::Buffer,
    hl: wgpu::Buffer,
    logits: wgpu::Buffer,
    targets: wgpu::Buffer,
    probs: wgpu::Buffer,
}

impl BufRefs {
    fn of(b: &Buffers) -> BufRefs {
        BufRefs {
            x: b.x.clone(),
            h: b.h.clone(),
            q: b.q.clone(),
            k: b.k.clone(),
            v: b.v.clone(),
            attn: b.attn.clone(),
            o: b.o.clone(),
            gate: b.gate.clone(),
            up: b.up.clone(),
            pos: b.pos.clone(),
            start: b.start.clone(),
            cos: b.cos.clone(),
            sin: b.sin.clone(),
            last: b.last.clone(),
            xl: b.xl.clone(),
            hl: b.hl.clone(),
            logits: b.logits.clone(),
            targets: b.targets.clone(),
            probs: b.probs.clone(),
        }
    }
}

/// Uploads a matrix in row chunks that each fit one storage binding.
fn upload_matrix(ctx: &GpuContext, m: &Matrix, uploaded: &mut u64) -> Result<GpuMatrix, GpuError> {
    let rw = row_words(m.ty(), m.cols());
    let row_bytes = 4 * rw;
    let max_rows = ctx.max_binding() as usize / row_bytes.max(1);
    if max_rows == 0 {
        return Err(GpuError::TooLarge(format!(
            "one row of '{}' ({row_bytes} bytes) exceeds the device's binding limit",
            m.name()
        )));
    }
    let mut chunks = Vec::new();
    let mut r0 = 0;
    while r0 < m.rows() {
        let n = max_rows.min(m.rows() - r0);
        let bytes = repack_rows(m, r0, n);
        *uploaded += bytes.len() as u64;
        let buf = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(m.name()),
                contents: &bytes,
                usage: wgpu::BufferUsages::STORAGE,
            });
        chunks.push((buf, r0, n));
        r0 += n;
    }
    Ok(GpuMatrix {
        ty: m.ty(),
        rows: m.rows(),
        cols: m.cols(),
        row_words: rw,
        chunks,
    })
}
