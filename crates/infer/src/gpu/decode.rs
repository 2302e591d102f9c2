//! Greedy decoding on the GPU (`greedy`): the prompts of a group are prefilled together (the
//! utility path's pass) while their keys and values are scattered into a GPU KV cache — one
//! buffer per layer for K and one for V shared by the group, each prompt owning the rows for
//! its prompt and its new tokens. Then each step is one submit for all running prompts: their
//! new tokens go through every matmul as one small GEMM (M = prompts still running), each token
//! attends to its own prompt's cache rows (decode_attention), the LM head and the arg-max run
//! on the GPU, and only the token ids are read back. Prompts leave the batch as they stop (EOS,
//! stop string, max_new_tokens, context), with the CPU engine's rules (generate::Decoding).

use super::buffers::{f32_bytes, Workspace};
use super::error::GpuError;
use super::ops::{argmax, u32_bytes, Recorder};
use super::prefill::Pass;
use super::upload::GpuModel;
use crate::generate::{Decoding, Generation, GreedyOptions};
use crate::model::Model;
use crate::tokenizer::Tokenizer;

/// Time split of the last `greedy` call (natively; zero in the browser, which has no clock here).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecodeStats {
    /// Seconds in the prefills (KV caches filled, first token's arg-max read back).
    pub prefill_seconds: f64,
    /// Seconds in the decoding steps.
    pub decode_seconds: f64,
    /// Decoding steps run (one submit each, all running prompts together).
    pub steps: usize,
    /// Tokens fed through decoding steps (the sum of the running prompts over the steps).
    pub decode_tokens: usize,
    pub prefill_tokens: usize,
}

/// Wall clock natively; nothing in the browser.
#[cfg(not(target_arch = "wasm32"))]
fn clock() -> Option<std::time::Instant> {
    Some(std::time::Instant::now())
}
#[cfg(target_arch = "wasm32")]
fn clock() -> Option<u8> {
    None
}
#[cfg(not(target_arch = "wasm32"))]
fn since(t: Option<std::time::Instant>) -> f64 {
    t.map_or(0.0, |t| t.elapsed().as_secs_f64())
}
#[cfg(target_arch = "wasm32")]
fn since(_: Option<u8>) -> f64 {
    0.0
}

impl GpuModel {
    /// Natively: `greedy` blocking on the GPU.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn greedy_blocking(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        prompts: &[&[u32]],
        options: &GreedyOptions,
    ) -> Result<Vec<Generation>, GpuError> {
        pollster::block_on(self.greedy(model, tokenizer, prompts, options))
    }

    /// Greedy answers, token for token the CPU engine's (generate::greedy_cpu). The prompts
    /// (validated by the caller, as for `prefill`) are split into groups whose tokens fit one
    /// prefill batch and whose KV caches fit the device; each group decodes to the end.
    pub async fn greedy(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        prompts: &[&[u32]],
        options: &GreedyOptions,
    ) -> Result<Vec<Generation>, GpuError> {
        let context = self.cfg.context_length;
        let rows = |p: &[u32]| (p.len() + options.max_new_tokens).min(context).max(p.len());
        for (i, p) in prompts.iter().enumerate() {
            if p.len() > self.max_tok || rows(p) > self.max_cache_rows {
                return Err(GpuError::TooLarge(format!(
                    "prompt {i} has {} tokens (+{} new); one GPU batch holds at most {} tokens and {} KV-cache rows on this device",
                    p.len(),
                    options.max_new_tokens,
                    self.max_tok,
                    self.max_cache_rows
                )));
            }
        }
        if let Ok(mut s) = self.stats.lock() {
            *s = DecodeStats::default();
        }
        let mut out = Vec::with_capacity(prompts.len());
        let mut i = 0;
        while i < prompts.len() {
            let (mut n_tok, mut n_rows, mut j) = (0, 0, i);
            while j < prompts.len()
                && j - i < self.max_prompts
                && n_tok + prompts[j].len() <= self.max_tok
                && n_rows + rows(prompts[j]) <= self.max_cache_rows
            {
                n_tok += prompts[j].len();
                n_rows += rows(prompts[j]);
                j += 1;
            }
            out.extend(
                self.greedy_group(model, tokenizer, &prompts[i..j], options)
                    .await?,
            );
            i = j;
        }
        Ok(out)
    }

    // The workspace guard is held across the readbacks on purpose (one batch at a time).
    #[allow(clippy::await_holding_lock)]
    async fn greedy_group(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        prompts: &[&[u32]],
        options: &GreedyOptions,
    ) -> Result<Vec<Generation>, GpuError> {
        let c = &self.cfg;
        let context = c.context_length;
        let n_p = prompts.len();
        let mut bases = Vec::with_capacity(n_p);
        let mut total = 0;
        let mut widest = 1;
        for p in prompts {
            let rows = (p.len() + options.max_new_tokens).min(context).max(p.len());
            bases.push(total);
            total += rows;
            widest = widest.max(rows);
        }
        let mut guard = self.lock()?;
        let ws = &mut *guard;
        ws.params.reset();
        let t0 = clock();
        self.ensure_cache(ws, total);
        self.prefill_layers(ws, model, prompts, Some(&bases), widest)?;
        let mut ids = self.head_argmax(ws, n_p).await?;
        let prefill_seconds = since(t0);
        let t1 = clock();
        let (mut steps, mut fed) = (0, 0);
        let mut dec = Decoding::new(tokenizer, options, context, n_p);
        let mut lens: Vec<usize> = prompts.iter().map(|p| p.len()).collect();
        let mut active: Vec<usize> = (0..n_p).collect();
        let window = c.gemma.as_ref().and_then(|g| g.sliding_window);
        let mut x = Vec::new();
        loop {
            let (still, next) = dec.accept(&active, &ids, |s| lens[s]);
            if still.is_empty() {
                break;
            }
            let n = still.len();
            ws.params.reset();
            self.embed(model, next.iter().copied(), &mut x);
            let (mut pos, mut dst, mut rg, mut rl) = (
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(2 * n),
                Vec::with_capacity(2 * n),
            );
            for &s in &still {
                let (base, p) = (bases[s], lens[s]);
                pos.push(p as u32);
                dst.push((base + p) as u32);
                rg.extend([base as u32, (base + p) as u32]);
                let lo = window.map_or(0, |w| (p + 1).saturating_sub(w));
                rl.extend([(base + lo) as u32, (base + p) as u32]);
            }
            let last: Vec<u32> = (0..n as u32).collect();
            {
                let b = ws
                    .bufs
                    .as_ref()
                    .ok_or_else(|| GpuError::Device("no buffers".into()))?;
                let q = &self.ctx.queue;
                q.write_buffer(&b.x, 0, &f32_bytes(&x));
                q.write_buffer(&b.pos, 0, &u32_bytes(&pos));
                q.write_buffer(&b.dst, 0, &u32_bytes(&dst));
                q.write_buffer(&b.range_g, 0, &u32_bytes(&rg));
                q.write_buffer(&b.range_l, 0, &u32_bytes(&rl));
                q.write_buffer(&b.last, 0, &u32_bytes(&last));
            }
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                for li in 0..self.layers.len() {
                    self.encode_layer(ws, &mut pass, li, n, Pass::Decode);
                }
            }
            self.ctx.queue.submit([enc.finish()]);
            ids = self.head_argmax(ws, n).await?;
            for &s in &still {
                lens[s] += 1;
            }
            steps += 1;
            fed += n;
            active = still;
        }
        if let Ok(mut s) = self.stats.lock() {
            s.prefill_seconds += prefill_seconds;
            s.decode_seconds += since(t1);
            s.steps += steps;
            s.decode_tokens += fed;
            s.prefill_tokens += prompts.iter().map(|p| p.len()).sum::<usize>();
        }
        Ok(dec.finish())
    }

    /// Final norm, LM head and arg-max of `n_p` rows (the `last` buffer's); reads back the ids.
    async fn head_argmax(&self, ws: &mut Workspace, n_p: usize) -> Result<Vec<u32>, GpuError> {
        let b = ws
            .bufs
            .as_ref()
            .ok_or_else(|| GpuError::Device("no buffers".into()))?;
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            let rec = &mut Recorder::new(&self.ctx, &mut ws.params, &mut pass);
            self.encode_head(rec, b, n_p);
            argmax::encode(rec, &b.logits, &b.ids, n_p, self.cfg.n_vocab);
        }
        let bytes = (4 * n_p) as u64;
        enc.copy_buffer_to_buffer(&b.ids, 0, &b.ids_staging, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
        let ids = super::readback::read_u32(&self.ctx, &b.ids_staging, bytes).await?;
        if let Some(e) = self.ctx.take_failure() {
            return Err(e);
        }
        if let Some(&bad) = ids.iter().find(|&&t| t as usize >= self.cfg.n_vocab) {
            return Err(GpuError::Device(format!(
                "the GPU arg-max returned token {bad}"
            )));
        }
        Ok(ids)
    }
}
