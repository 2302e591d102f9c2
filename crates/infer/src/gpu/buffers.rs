//! A model's batch workspace on the device, kept and reused across batches and grown only when
//! a larger batch arrives: the activation buffers, the RoPE tables, the decoding KV cache, the
//! dispatches' parameter buffers and the readback staging buffers.

use super::error::GpuError;
use super::ops::Params;
use super::upload::GpuModel;
use crate::model::Model;

pub(super) fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(super) struct Buffers {
    pub(super) cap_tok: usize,
    /// Output planes `o` and `qkv` hold: 2 where two fit one binding (split-K products).
    pub(super) planes: usize,
    pub(super) cap_prompts: usize,
    pub(super) x: wgpu::Buffer,
    pub(super) h: wgpu::Buffer,
    pub(super) q: wgpu::Buffer,
    pub(super) k: wgpu::Buffer,
    pub(super) v: wgpu::Buffer,
    /// The fused Q|K|V GEMM's rows (1 float when no layer fuses them).
    pub(super) qkv: wgpu::Buffer,
    pub(super) attn: wgpu::Buffer,
    pub(super) o: wgpu::Buffer,
    pub(super) gate: wgpu::Buffer,
    /// Up, or the fused gate|up GEMM's rows (twice as wide) when a layer fuses them.
    pub(super) up: wgpu::Buffer,
    pub(super) pos: wgpu::Buffer,
    pub(super) start: wgpu::Buffer,
    pub(super) last: wgpu::Buffer,
    pub(super) xl: wgpu::Buffer,
    pub(super) hl: wgpu::Buffer,
    pub(super) logits: wgpu::Buffer,
    pub(super) targets: wgpu::Buffer,
    pub(super) probs: wgpu::Buffer,
    pub(super) staging: wgpu::Buffer,
    /// Gemma 3: K before its per-head norm.
    pub(super) kt: wgpu::Buffer,
    /// Decoding: each row's KV-cache row (scatter), its cache ranges (global and local layers),
    /// the arg-max ids and their readback copy.
    pub(super) dst: wgpu::Buffer,
    pub(super) range_g: wgpu::Buffer,
    pub(super) range_l: wgpu::Buffer,
    pub(super) ids: wgpu::Buffer,
    pub(super) ids_staging: wgpu::Buffer,
}

/// RoPE tables for positions `0..cap` (global, and Gemma 3's local ones).
pub(super) struct Rope {
    pub(super) cap: usize,
    pub(super) cos: wgpu::Buffer,
    pub(super) sin: wgpu::Buffer,
    pub(super) cos_l: wgpu::Buffer,
    pub(super) sin_l: wgpu::Buffer,
}

/// The KV cache of a decoding group: per layer, `rows × kv_dim` keys and values.
pub(super) struct Cache {
    pub(super) rows: usize,
    pub(super) k: Vec<wgpu::Buffer>,
    pub(super) v: Vec<wgpu::Buffer>,
}

#[derive(Default)]
pub(super) struct Workspace {
    pub(super) bufs: Option<Buffers>,
    pub(super) rope: Option<Rope>,
    pub(super) cache: Option<Cache>,
    pub(super) params: Params,
}

impl GpuModel {
    /// Bytes of every buffer this model holds on the device: the weights plus the batch
    /// workspace (activations, RoPE tables, the decoding KV cache, readback staging), which grows to the largest batch
    /// seen and is then reused. Uniform parameter buffers are left out (a few hundred bytes each).
    pub fn device_bytes(&self) -> u64 {
        let workspace = self.work.try_lock().ok().map(|ws| {
            let mut bufs: Vec<&wgpu::Buffer> = Vec::new();
            if let Some(b) = ws.bufs.as_ref() {
                bufs.extend([
                    &b.x,
                    &b.h,
                    &b.q,
                    &b.k,
                    &b.v,
                    &b.qkv,
                    &b.attn,
                    &b.o,
                    &b.gate,
                    &b.up,
                    &b.pos,
                    &b.start,
                    &b.last,
                    &b.xl,
                    &b.hl,
                    &b.logits,
                    &b.targets,
                    &b.probs,
                    &b.staging,
                    &b.kt,
                    &b.dst,
                    &b.range_g,
                    &b.range_l,
                    &b.ids,
                    &b.ids_staging,
                ]);
            }
            if let Some(r) = ws.rope.as_ref() {
                bufs.extend([&r.cos, &r.sin, &r.cos_l, &r.sin_l]);
            }
            if let Some(c) = ws.cache.as_ref() {
                bufs.extend(c.k.iter().chain(c.v.iter()));
            }
            bufs.iter().map(|buf| buf.size()).sum::<u64>()
        });
        self.uploaded_bytes + workspace.unwrap_or(0)
    }

    pub(super) fn ensure_buffers(&self, ws: &mut Workspace, n_tok: usize, n_prompts: usize) {
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
        let fused_qkv = self.layers.iter().any(|l| l.qkv.is_fused());
        let fused_ff = self.layers.iter().any(|l| l.gate_up.is_fused());
        let qkv_dim = q_dim + 2 * kv_dim;
        let widest = if fused_qkv { qkv_dim } else { 1 }.max(c.n_embd);
        let planes = if 8 * cap_tok * widest <= self.ctx.max_binding() as usize {
            2
        } else {
            1
        };
        ws.bufs = Some(Buffers {
            cap_tok,
            planes,
            cap_prompts,
            x: storage(cap_tok * c.n_embd, none),
            h: storage(cap_tok * c.n_embd, none),
            q: storage(cap_tok * q_dim, none),
            k: storage(cap_tok * kv_dim, none),
            v: storage(cap_tok * kv_dim, none),
            qkv: storage(
                if fused_qkv {
                    planes * cap_tok * qkv_dim
                } else {
                    1
                },
                none,
            ),
            attn: storage(cap_tok * q_dim, none),
            o: storage(planes * cap_tok * c.n_embd, none),
            gate: storage(cap_tok * c.n_ff, none),
            up: storage(cap_tok * c.n_ff * if fused_ff { 2 } else { 1 }, none),
            pos: storage(cap_tok, none),
            start: storage(cap_tok, none),
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
            kt: storage(
                if c.gemma.is_some() {
                    cap_tok * kv_dim
                } else {
                    1
                },
                none,
            ),
            dst: storage(cap_tok, none),
            range_g: storage(2 * cap_tok, none),
            range_l: storage(2 * cap_tok, none),
            ids: storage(cap_prompts, wgpu::BufferUsages::COPY_SRC),
            ids_staging: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("token ids readback"),
                size: (4 * cap_prompts) as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        });
    }

    /// RoPE tables covering positions `0..n_pos` (grown, never shrunk).
    pub(super) fn ensure_rope(&self, ws: &mut Workspace, n_pos: usize, model: &Model) {
        if ws.rope.as_ref().is_some_and(|r| r.cap >= n_pos) {
            return;
        }
        let cap = n_pos.next_power_of_two().max(n_pos);
        let half = self.cfg.n_rot / 2;
        // Created empty and written through the queue: on a lost device this records an error
        // (reported after the batch) instead of panicking as a mapped-at-creation buffer would.
        let upload = |v: &[f32]| {
            let mut b = f32_bytes(v);
            b.resize(b.len().max(4), 0);
            let buf = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rope"),
                size: b.len() as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.ctx.queue.write_buffer(&buf, 0, &b);
            buf
        };
        let (cos, sin) = model.rope_tables(cap);
        let (cos_l, sin_l) = model
            .rope_tables_local(cap)
            .unwrap_or_else(|| (vec![0.0; half.min(1)], vec![0.0; half.min(1)]));
        ws.rope = Some(Rope {
            cap,
            cos: upload(&cos),
            sin: upload(&sin),
            cos_l: upload(&cos_l),
            sin_l: upload(&sin_l),
        });
    }

    /// KV-cache buffers of at least `rows` rows per layer (grown, never shrunk).
    pub(super) fn ensure_cache(&self, ws: &mut Workspace, rows: usize) {
        if ws.cache.as_ref().is_some_and(|c| c.rows >= rows) {
            return;
        }
        ws.cache = None;
        let rows = rows.next_power_of_two().min(self.max_cache_rows).max(rows);
        let kv_dim = self.cfg.n_head_kv * self.cfg.head_dim;
        let make = || {
            (0..self.layers.len())
                .map(|_| {
                    self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("kv cache"),
                        size: (4 * rows * kv_dim).max(4) as u64,
                        usage: wgpu::BufferUsages::STORAGE,
                        mapped_at_creation: false,
                    })
                })
                .collect::<Vec<_>>()
        };
        ws.cache = Some(Cache {
            rows,
            k: make(),
            v: make(),
        });
    }

    /// The workspace, one batch at a time per model (its buffers are reused). A second concurrent
    /// call (possible only from async code) gets an error instead of a deadlock.
    pub(super) fn lock(&self) -> Result<std::sync::MutexGuard<'_, Workspace>, GpuError> {
        match self.work.try_lock() {
            Ok(ws) => Ok(ws),
            Err(std::sync::TryLockError::WouldBlock) => Err(GpuError::Device(
                "another batch is running on this model; run batches one after another".into(),
            )),
            Err(std::sync::TryLockError::Poisoned(_)) => {
                Err(GpuError::Device("a previous batch panicked".into()))
            }
        }
    }
}
