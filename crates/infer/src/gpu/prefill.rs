//! The prefill on the GPU: the same steps as model/forward.rs (RMSNorm → Q/K/V (+bias) →
//! [Gemma 3: per-head Q/K norms] → RoPE → causal GQA attention (sliding window on Gemma 3's local
//! layers) → O → [post-norm] → residual → RMSNorm → SwiGLU or GeGLU → [post-norm] → residual;
//! final norm and LM head at each prompt's last position). A prefill is one submit per layer;
//! each step is one op's launcher (ops/).

use super::buffers::{f32_bytes, Buffers, Rope, Workspace};
use super::error::GpuError;
use super::ops::attention::{self, Geometry};
use super::ops::{decode_attention, elementwise, matmul, rms_norm, rope, softmax};
use super::ops::{u32_bytes, Kernel, Recorder};
use super::upload::{GpuLayer, GpuModel, Proj};
use crate::model::{Model, PrefillOutput, RopeLayout};

/// What one layer's attention reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// The batch's own packed prompts; `fill`: their keys and values also go into the KV cache.
    Prefill { fill: bool },
    /// One new token per running prompt against its cache rows.
    Decode,
}

impl GpuModel {
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

    /// Token embedding rows (a host lookup), scaled by √d for Gemma 3 as the CPU engine does.
    pub(super) fn embed(
        &self,
        model: &Model,
        tokens: impl Iterator<Item = u32>,
        out: &mut Vec<f32>,
    ) {
        let d = self.cfg.n_embd;
        out.clear();
        for id in tokens {
            let at = out.len();
            out.resize(at + d, 0.0);
            model
                .token_embedding()
                .dequantize_rows(id as usize, &mut out[at..at + d]);
        }
        if self.cfg.gemma.is_some() {
            let scale = (d as f32).sqrt();
            for v in out.iter_mut() {
                *v *= scale;
            }
        }
    }

    /// Writes a prefill batch's inputs and submits its layers (one submit each). With `bases`,
    /// prompt i's keys and values also go to KV-cache rows `bases[i]..`.
    pub(super) fn prefill_layers(
        &self,
        ws: &mut Workspace,
        model: &Model,
        prompts: &[&[u32]],
        bases: Option<&[usize]>,
        rope_pos: usize,
    ) -> Result<(), GpuError> {
        let n_tok: usize = prompts.iter().map(|p| p.len()).sum();
        self.ensure_buffers(ws, n_tok, prompts.len());
        self.ensure_rope(ws, rope_pos, model);
        let mut x = Vec::new();
        self.embed(
            model,
            prompts.iter().flat_map(|p| p.iter().copied()),
            &mut x,
        );
        let (mut pos, mut start, mut last, mut dst) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut t = 0;
        for (s, p) in prompts.iter().enumerate() {
            for i in 0..p.len() {
                pos.push(i as u32);
                start.push(t as u32);
                if let Some(b) = bases {
                    dst.push((b[s] + i) as u32);
                }
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
            if !dst.is_empty() {
                q.write_buffer(&b.dst, 0, &u32_bytes(&dst));
            }
        }
        let mode = Pass::Prefill {
            fill: bases.is_some(),
        };
        for li in 0..self.layers.len() {
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                self.encode_layer(ws, &mut pass, li, n_tok, mode);
            }
            self.ctx.queue.submit([enc.finish()]);
        }
        Ok(())
    }

    // The workspace guard is held across the readback on purpose (one batch at a time).
    #[allow(clippy::await_holding_lock)]
    async fn run_batch(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: Option<&[u32]>,
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        let c = &self.cfg;
        let n_p = prompts.len();
        let mut guard = self.lock()?;
        let ws = &mut *guard;
        ws.params.reset();
        let longest = prompts.iter().map(|p| p.len()).max().unwrap_or(1);
        self.prefill_layers(ws, model, prompts, None, longest)?;
        let b = ws
            .bufs
            .as_ref()
            .ok_or_else(|| GpuError::Device("no buffers".into()))?;
        if let Some(t) = targets {
            self.ctx.queue.write_buffer(&b.targets, 0, &u32_bytes(t));
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            let rec = &mut Recorder::new(&self.ctx, &mut ws.params, &mut pass);
            self.encode_head(rec, b, n_p);
            if targets.is_some() {
                softmax::encode(rec, &b.logits, &b.targets, &b.probs, n_p, c.n_vocab);
            }
        }
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

    /// Records one layer (`mode`: a prefill, or a decoding step over the KV cache). Nothing is
    /// recorded before the workspace has its buffers, tables and (where read) cache.
    pub(super) fn encode_layer(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        li: usize,
        n_tok: usize,
        mode: Pass,
    ) {
        let Workspace {
            bufs,
            rope,
            cache,
            params,
        } = ws;
        let (Some(b), Some(tables)) = (bufs.as_ref(), rope.as_ref()) else {
            return;
        };
        let cache = match (mode, cache.as_ref()) {
            (Pass::Prefill { fill: false }, _) => None,
            (_, Some(cache)) => Some((&cache.k[li], &cache.v[li])),
            (_, None) => return,
        };
        let rec = &mut Recorder::new(&self.ctx, params, pass);
        let l = &self.layers[li];
        self.encode_attention(rec, l, b, tables, cache, n_tok, mode);
        self.encode_ffn(rec, l, b, n_tok);
    }

    /// x += O · attention(RoPE(Q), RoPE(K), V) of RMSNorm(x), with the layer's biases, Gemma 3's
    /// per-head Q/K norms and post-norm; keys and values also go to the cache where it is given.
    #[allow(clippy::too_many_arguments)]
    fn encode_attention(
        &self,
        rec: &mut Recorder,
        l: &GpuLayer,
        b: &Buffers,
        tables: &Rope,
        cache: Option<(&wgpu::Buffer, &wgpu::Buffer)>,
        n_tok: usize,
        mode: Pass,
    ) {
        let c = &self.cfg;
        let kn = &rec.kernels().elementwise;
        let hd = c.head_dim;
        let kv_dim = c.n_head_kv * hd;
        rms_norm::encode(rec, &b.x, &l.attn_norm, &b.h, n_tok, c.n_embd, c.rms_eps);
        // Gemma 3 norms Q and K per head after the projections: they land in scratch buffers first.
        let (raw_q, raw_k) = if l.q_norm.is_some() {
            (&b.attn, &b.kt)
        } else {
            (&b.q, &b.k)
        };
        self.encode_qkv(rec, l, b, (raw_q, raw_k), n_tok);
        if let (Some(qn), Some(kn_w)) = (&l.q_norm, &l.k_norm) {
            rms_norm::encode(rec, &b.attn, qn, &b.q, n_tok * c.n_head, hd, c.rms_eps);
            rms_norm::encode(rec, &b.kt, kn_w, &b.k, n_tok * c.n_head_kv, hd, c.rms_eps);
        }
        let tables = if l.local {
            (&tables.cos_l, &tables.sin_l)
        } else {
            (&tables.cos, &tables.sin)
        };
        let neox = c.rope_layout == RopeLayout::NeoX;
        for (y, heads) in [(&b.q, c.n_head), (&b.k, c.n_head_kv)] {
            rope::encode(rec, y, &b.pos, tables, n_tok, heads, hd, c.n_rot, neox);
        }
        if let Some((kc, vc)) = cache {
            for (src, dst) in [(&b.k, kc), (&b.v, vc)] {
                let n = n_tok * kv_dim;
                elementwise::encode(rec, &kn.scatter, n, kv_dim, dst, src, &b.dst);
            }
        }
        let scale = c
            .gemma
            .as_ref()
            .map_or(1.0 / (hd as f32).sqrt(), |g| g.attn_scale);
        let window = if l.local {
            c.gemma.as_ref().and_then(|g| g.sliding_window).unwrap_or(0)
        } else {
            0
        };
        let g = Geometry {
            n_tok,
            n_head: c.n_head,
            n_kv: c.n_head_kv,
            head_dim: hd,
            scale,
        };
        match (mode, cache) {
            (Pass::Decode, Some(kv)) => {
                let range = if l.local { &b.range_l } else { &b.range_g };
                decode_attention::encode(rec, &g, &b.q, kv, range, &b.attn);
            }
            _ => {
                let qkv = (&b.q, &b.k, &b.v);
                attention::encode(rec, &g, window, qkv, &b.start, &b.attn);
            }
        }
        let post_norm = l.post_attn_norm.as_ref();
        self.encode_residual(rec, b, &l.wo, post_norm, &b.attn, n_tok);
    }

    /// Q, K and V of `b.h` into `raw_q`, `raw_k` and `b.v` (one fused GEMM taken apart by
    /// `split`, or one GEMM each), plus their biases.
    fn encode_qkv(
        &self,
        rec: &mut Recorder,
        l: &GpuLayer,
        b: &Buffers,
        (raw_q, raw_k): (&wgpu::Buffer, &wgpu::Buffer),
        n_tok: usize,
    ) {
        let c = &self.cfg;
        let q_dim = c.n_head * c.head_dim;
        let kv_dim = c.n_head_kv * c.head_dim;
        let outs = [(raw_q, q_dim), (raw_k, kv_dim), (&b.v, kv_dim)];
        match &l.qkv {
            Proj::Fused(m) => {
                let split = self.split_k && b.planes == 2;
                let planes =
                    matmul::encode_split(rec, m, &b.h, &b.qkv, n_tok, self.wide_tile, split);
                // With K split, `split` adds the second plane (n_tok rows further).
                let plane = if planes == 2 { n_tok * m.rows } else { 0 };
                let mut col = 0;
                for (y, dim) in outs {
                    let cols = (m.rows, col, plane);
                    elementwise::split(rec, y, &b.qkv, n_tok, dim, cols, &b.pos);
                    col += dim;
                }
            }
            Proj::Parts(ms) => {
                for (m, (y, _)) in ms.iter().zip(outs) {
                    matmul::encode(rec, m, &b.h, y, n_tok, self.wide_tile);
                }
            }
        }
        let kn = &rec.kernels().elementwise;
        for (bias, y, dim) in [
            (&l.bq, raw_q, q_dim),
            (&l.bk, raw_k, kv_dim),
            (&l.bv, &b.v, kv_dim),
        ] {
            if let Some(bias) = bias {
                elementwise::encode(rec, &kn.bias, n_tok * dim, dim, y, bias, &b.pos);
            }
        }
    }

    /// x += down · act(gate, up) of RMSNorm(x) (SwiGLU, or GeGLU for Gemma 3), with the
    /// post-norm where the layer has one.
    fn encode_ffn(&self, rec: &mut Recorder, l: &GpuLayer, b: &Buffers, n_tok: usize) {
        let c = &self.cfg;
        let kn = &rec.kernels().elementwise;
        rms_norm::encode(rec, &b.x, &l.ffn_norm, &b.h, n_tok, c.n_embd, c.rms_eps);
        let ff = c.n_ff;
        let geglu = c.gemma.is_some();
        let act: &Kernel = match &l.gate_up {
            // One GEMM writes gate|up rows into `up`; the activation reads both halves.
            Proj::Fused(m) => {
                matmul::encode(rec, m, &b.h, &b.up, n_tok, self.wide_tile);
                if geglu {
                    &kn.geglu_halves
                } else {
                    &kn.swiglu_halves
                }
            }
            Proj::Parts(ms) => {
                for (m, y) in ms.iter().zip([&b.gate, &b.up]) {
                    matmul::encode(rec, m, &b.h, y, n_tok, self.wide_tile);
                }
                if geglu {
                    &kn.geglu
                } else {
                    &kn.swiglu
                }
            }
        };
        elementwise::encode(rec, act, n_tok * ff, ff, &b.gate, &b.up, &b.pos);
        let post_norm = l.post_ffn_norm.as_ref();
        self.encode_residual(rec, b, &l.w_down, post_norm, &b.gate, n_tok);
    }

    /// x += input · Wᵀ (O after the attention, down after the FFN), or its post-norm where the
    /// layer has one. Without a post-norm the product only feeds this add, so its K may split
    /// (`split_k`): the add then sums the two planes (residual_split).
    fn encode_residual(
        &self,
        rec: &mut Recorder,
        b: &Buffers,
        m: &matmul::GpuMatrix,
        post_norm: Option<&wgpu::Buffer>,
        input: &wgpu::Buffer,
        n_tok: usize,
    ) {
        let d = self.cfg.n_embd;
        let kn = &rec.kernels().elementwise;
        let (add, residual) = match post_norm {
            Some(w) => {
                matmul::encode(rec, m, input, &b.o, n_tok, self.wide_tile);
                rms_norm::encode(rec, &b.o, w, &b.h, n_tok, d, self.cfg.rms_eps);
                (&b.h, &kn.residual)
            }
            None => {
                let split = self.split_k && b.planes == 2;
                let planes =
                    matmul::encode_split(rec, m, input, &b.o, n_tok, self.wide_tile, split);
                let k = if planes == 1 {
                    &kn.residual
                } else {
                    &kn.residual_split
                };
                (&b.o, k)
            }
        };
        elementwise::encode(rec, residual, n_tok * d, d, &b.x, add, &b.pos);
    }

    /// Final norm and LM head of the `last` buffer's `n_p` rows, into `logits`.
    pub(super) fn encode_head(&self, rec: &mut Recorder, b: &Buffers, n_p: usize) {
        let d = self.cfg.n_embd;
        let kn = &rec.kernels().elementwise;
        elementwise::encode(rec, &kn.gather, n_p * d, d, &b.xl, &b.x, &b.last);
        rms_norm::encode(
            rec,
            &b.xl,
            &self.output_norm,
            &b.hl,
            n_p,
            d,
            self.cfg.rms_eps,
        );
        matmul::encode(rec, &self.lm_head, &b.hl, &b.logits, n_p, self.wide_tile);
    }
}
