//! `Model::prefill` on the GPU (natively): a `PrefillBackend` that owns the device and the
//! uploaded weights and recovers from a lost device: the failed batch is retried once on a new
//! device (weights uploaded again), then, only if the caller allowed it, computed on the CPU.
//! Results already returned are never recomputed or lost: each call is one batch of prompts.

use super::context::GpuContext;
use super::engine::GpuModel;
use super::error::GpuError;
use crate::error::Result;
use crate::model::{Model, PrefillBackend, PrefillOutput};
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

    #[cfg(not(target_arch = "wasm32"))]
    fn run(
        &self,
        model: &Model,
        prompts: &[&[u32]],
    ) -> std::result::Result<PrefillOutput, GpuError> {
        let mut slot = self
            .gpu
            .lock()
            .map_err(|_| GpuError::Device("a previous batch panicked".into()))?;
        let first = match slot.as_ref() {
            Some(g) => g.prefill_blocking(model, prompts),
            None => Err(GpuError::DeviceLost("no device".into())),
        };
        match first {
            Err(e @ (GpuError::DeviceLost(_) | GpuError::Device(_))) => {
                eprintln!("ragscope: {e}; retrying the batch once on a new GPU device");
                *slot = None;
                let ctx = GpuContext::new_blocking()?;
                let g = GpuModel::upload(ctx, model)?;
                let out = g.prefill_blocking(model, prompts);
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
        match self.run(model, prompts) {
            Ok(out) => Ok(out),
            Err(e) if self.policy == GpuPolicy::CpuFallback => {
                eprintln!("ragscope: {e}; computing this batch on the CPU (fallback allowed)");
                model.prefill_cpu(prompts)
            }
            Err(e) => Err(e.into()),
        }
    }
}
