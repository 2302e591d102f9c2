//! `Model::prefill` on the GPU (natively): a `PrefillBackend` that owns the device and the
//! uploaded weights and recovers from a lost device: the failed batch is retried once on a new
//! device (weights uploaded again), then, only if the caller allowed it, computed on the CPU.
//! Results already returned are never recomputed or lost: each call is one batch of prompts.
//! A batch that runs out of GPU memory is run in smaller parts on a new device instead.
//! It also decodes (`generate::greedy` calls its `greedy`), with the same recovery.

use super::device::GpuContext;
use super::error::GpuError;
use super::upload::GpuModel;
use crate::error::Result;
use crate::generate::{Generation, GreedyOptions};
use crate::model::{Model, PrefillBackend, PrefillOutput};
use crate::tokenizer::Tokenizer;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// Batches of more prompts fail as out of memory (`simulate_memory_for`; tests only).
    memory_for: AtomicUsize,
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
            memory_for: AtomicUsize::new(usize::MAX),
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

    /// Makes every batch of more than `prompts` prompts fail as out of memory, as a device with
    /// little memory would (tests of the recovery path).
    pub fn simulate_memory_for(&self, prompts: usize) {
        self.memory_for.store(prompts, Ordering::SeqCst);
    }

    /// Runs `f` on the device for `prompts`. A lost device or a failed command: the device is
    /// replaced (weights uploaded again) and the batch retried once. Out of memory on a batch
    /// of several prompts: the device is replaced and the batch run in parts of half its
    /// size, halved again (on a new device) while a part runs out too, down to one prompt;
    /// the parts' results are joined in order, so the caller sees one batch.
    #[cfg(not(target_arch = "wasm32"))]
    fn with_device<T>(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        f: impl Fn(&GpuModel, &[&[u32]]) -> std::result::Result<T, GpuError>,
        join: impl Fn(T, T) -> T,
    ) -> std::result::Result<T, GpuError> {
        let mut slot = self
            .gpu
            .lock()
            .map_err(|_| GpuError::Device("a previous batch panicked".into()))?;
        let split = prompts.len() > 1;
        let out = match self.attempt(&slot, prompts, &f) {
            // out of memory on several prompts goes to the split below instead
            Err(e)
                if e.is_device_failure() && !(split && matches!(e, GpuError::OutOfMemory(_))) =>
            {
                eprintln!("ragscope: {e}; retrying the batch once on a new GPU device");
                Self::replace_device(&mut slot, model)?;
                self.attempt(&slot, prompts, &f)
            }
            other => other,
        };
        match out {
            Err(GpuError::OutOfMemory(why)) if split => {
                self.in_parts(&mut slot, model, prompts, &f, &join, &why)
            }
            other => other,
        }
    }

    /// `f` on `prompts` on the current device, unless the simulated memory has no room.
    fn attempt<T>(
        &self,
        slot: &Option<GpuModel>,
        prompts: &[&[u32]],
        f: &impl Fn(&GpuModel, &[&[u32]]) -> std::result::Result<T, GpuError>,
    ) -> std::result::Result<T, GpuError> {
        let room = self.memory_for.load(Ordering::SeqCst);
        if prompts.len() > room {
            return Err(GpuError::OutOfMemory(format!(
                "simulated: room for {room} prompts, not {}",
                prompts.len()
            )));
        }
        match slot.as_ref() {
            Some(g) => f(g, prompts),
            None => Err(GpuError::DeviceLost("no device".into())),
        }
    }

    /// The batch `prompts`, which ran out of memory (`why`), in parts on new devices.
    #[cfg(not(target_arch = "wasm32"))]
    fn in_parts<T>(
        &self,
        slot: &mut Option<GpuModel>,
        model: &Model,
        prompts: &[&[u32]],
        f: &impl Fn(&GpuModel, &[&[u32]]) -> std::result::Result<T, GpuError>,
        join: &impl Fn(T, T) -> T,
        why: &str,
    ) -> std::result::Result<T, GpuError> {
        let mut size = prompts.len().div_ceil(2);
        eprintln!(
            "ragscope: the GPU ran out of memory on a batch of {} prompts ({why}); running it in \
             parts of {size} on a new device",
            prompts.len()
        );
        Self::replace_device(slot, model)?;
        let mut joined: Option<T> = None;
        let mut at = 0;
        while at < prompts.len() {
            let end = prompts.len().min(at + size);
            match self.attempt(slot, &prompts[at..end], f) {
                Ok(part) => {
                    joined = Some(match joined {
                        Some(before) => join(before, part),
                        None => part,
                    });
                    at = end;
                }
                Err(GpuError::OutOfMemory(why)) if size > 1 => {
                    size = size.div_ceil(2);
                    eprintln!(
                        "ragscope: out of memory again ({why}); parts of {size} on a new device"
                    );
                    Self::replace_device(slot, model)?;
                }
                Err(e) => return Err(e),
            }
        }
        joined.ok_or_else(|| GpuError::Device("an empty batch".into()))
    }

    /// Lets the failed device go (its memory with it) and uploads the weights to a new one.
    #[cfg(not(target_arch = "wasm32"))]
    fn replace_device(
        slot: &mut Option<GpuModel>,
        model: &Model,
    ) -> std::result::Result<(), GpuError> {
        *slot = None;
        let ctx = GpuContext::new_blocking()?;
        *slot = Some(GpuModel::upload(ctx, model)?);
        Ok(())
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl PrefillBackend for GpuBackend {
    fn name(&self) -> String {
        format!("GPU: {}", self.name)
    }

    fn prefill(&self, model: &Model, prompts: &[&[u32]]) -> Result<PrefillOutput> {
        let run = |g: &GpuModel, part: &[&[u32]]| g.prefill_blocking(model, part);
        let join = |mut a: PrefillOutput, b: PrefillOutput| {
            a.last_logits.extend(b.last_logits);
            a
        };
        match self.with_device(model, prompts, run, join) {
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
        let run =
            |g: &GpuModel, part: &[&[u32]]| g.greedy_blocking(model, tokenizer, part, options);
        let join = |mut a: Vec<Generation>, b: Vec<Generation>| {
            a.extend(b);
            a
        };
        match self.with_device(model, prompts, run, join) {
            Ok(out) => Some(Ok(out)),
            Err(e) if self.policy == GpuPolicy::CpuFallback => {
                eprintln!("ragscope: {e}; decoding this batch on the CPU (fallback allowed)");
                None
            }
            Err(e) => Some(Err(e.into())),
        }
    }
}
