//! `Model::prefill` on the GPU (natively): a `PrefillBackend` that owns the device and the
//! uploaded weights and recovers from a lost device: the failed batch is retried once on a new
//! device (weights uploaded again), then, only if the caller allowed it, computed on the CPU.
//! Results already returned are never recomputed or lost: each call is one batch of prompts.
//! It also decodes (`generate::greedy` calls its `greedy`), with the same recovery.

use super::context::GpuContext;
use super::engine::GpuModel;
use super::error::GpuError;
use crate::error::Result;
use crate::generate::{Generation, GreedyOptions};
use crate::model::{Model, PrefillBackend, PrefillOutput};
use crate::tokenizer::Tokenizer;
use std::sync::Mutex;

/// What to do when the GPU fails mid-batch after the one retry on a new device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuPolicy {
    /// Report the error.
    GpuOnly,
    /// Compute the batch on the CPU engine and say so on stderr.
    CpuFallback,
}

#[derive(Debug)]
pub struct GpuBackend {
    gpu: Mutex<Option<GpuModel>>,
    name: String,
    policy: GpuPolicy,
}

impl GpuBackend {
    /// Opens a device and uploads the model's weights.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(model: &Model, policy: GpuPolicy) -> std::result::Result<GpuBackend, GpuError> {
        let ctx = GpuContext::new_blocking()?;
        let name = ctx.summary.to_string();
        let gpu = GpuModel::upload(ctx, model)?;
        Ok(GpuBackend {
            gpu: Mutex::new(Some(gpu)),
            name,
            policy,
        })
    }

    /// The adapter (name, API, type) the weights live on.
    pub fn adapter(&self) -> &str {
        &self.name
    }

    /// Destroys the current device (tests of the recovery path).
    pub fn simulate_device_loss(&self) {
        if let Ok(g) = self.gpu.lock() {
            if let Some(g) = g.as_ref() {
                g.context().simulate_loss();
            }
        }
    }

    /// Runs `f` on the device; a lost device is replaced once (weights uploaded again) and `f`
    /// retried on it.
    #[cfg(not(target_arch = "wasm32"))]
    fn with_device<T>(
        &self,
        model: &Model,
        f: impl Fn(&GpuModel) -> std::result::Result<T, GpuError>,
    ) -> std::result::Result<T, GpuError> {
        let mut slot = self
            .gpu
            .lock()
            .map_err(|_| GpuError::Device("a previous batch panicked".into()))?;
        let first = match slot.as_ref() {
            Some(g) => f(g),
            None => Err(GpuError::DeviceLost("no device".into())),
        };
        match first {
            Err(e @ (GpuError::DeviceLost(_) | GpuError::Device(_))) => {
                eprintln!("ragscope: {e}; retrying the batch once on a new GPU device");
                *slot = None;
                let ctx = GpuContext::new_blocking()?;
                let g = GpuModel::upload(ctx, model)?;
                let out = f(&g);
                *slot = Some(g);
                out
            }
            other => other,
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl PrefillBackend for GpuBackend {
    fn name(&self) -> String {
        format!("GPU: {}", self.name)
    }

    fn prefill(&self, model: &Model, prompts: &[&[u32]]) -> Result<PrefillOutput> {
        match self.with_device(model, |g| g.prefill_blocking(model, prompts)) {
            Ok(out) => Ok(out),
            Err(e) if self.policy == GpuPolicy::CpuFallback => {
                eprintln!("ragscope: {e}; computing this batch on the CPU (fallback allowed)");
                model.prefill_cpu(prompts)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Greedy decoding on the GPU; a group that failed after the retry is decoded again from
    /// the start on the CPU engine when the policy allows it.
    fn greedy(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        prompts: &[&[u32]],
        options: &GreedyOptions,
    ) -> Option<Result<Vec<Generation>>> {
        match self.with_device(model, |g| {
            g.greedy_blocking(model, tokenizer, prompts, options)
        }) {
            Ok(out) => Some(Ok(out)),
            Err(e) if self.policy == GpuPolicy::CpuFallback => {
                eprintln!("ragscope: {e}; decoding this batch on the CPU (fallback allowed)");
                None
            }
            Err(e) => Some(Err(e.into())),
        }
    }
}
