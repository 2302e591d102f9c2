//! WebGPU in the worker: the opened model's weights uploaded once to a device of the worker's
//! own `navigator.gpu` (crates/infer's wgpu backend, on the browser's WebGPU), batches of
//! passages per step, and recovery from a lost device: the failed batch is retried once on a
//! new device (weights uploaded again); if that fails too, the run continues on the CPU when the
//! user allowed it, else it pauses. A batch that runs out of GPU memory is retried in batches
//! of half as many passages on a new device (halved again while they still run out), and the
//! run goes on with that size. Results are kept only for batches that completed, so nothing
//! already computed is lost or computed twice.

use super::{LocalModel, UtilityJob, CPU_LABEL};
use crate::engine::Workspace;
use ragscope_infer::gpu::{GpuContext, GpuError, GpuModel};
use ragscope_infer::utility::{token_probability, NoResponseScorer, PromptTemplate};
use ragscope_protocol::compute::BackendInfo;

/// Passages per GPU step: several prompts share each matmul (packed, no padding), while pause
/// and cancel still answer within one step.
const STEP_PROMPTS: usize = 8;

/// How many prompts a GPU batch may hold: no limit until the device ran out of memory, then
/// what fitted (utilities and answers both keep to it).
pub struct GpuRoom {
    prompts: usize,
    /// Batches of more fail as out of memory, as on a device with little memory (tests).
    simulated: usize,
}

impl Default for GpuRoom {
    fn default() -> Self {
        GpuRoom {
            prompts: usize::MAX,
            simulated: usize::MAX,
        }
    }
}

impl GpuRoom {
    /// At most `wanted`, within what the device had memory for.
    pub(super) fn batch(&self, wanted: usize) -> usize {
        wanted.min(self.prompts)
    }

    /// The simulated out-of-memory error for a batch of `prompts`, if it has no room.
    pub(super) fn simulated_failure(&self, prompts: usize) -> Option<GpuError> {
        (prompts > self.simulated).then(|| {
            GpuError::OutOfMemory(format!(
                "simulated: room for {}, not {prompts}",
                self.simulated
            ))
        })
    }
}

/// After a batch of `batch` prompts ran out of memory: room for half as many from now on, and
/// a new device (the failed one goes first, with the memory it held). The new room and the
/// device's label, or why there is no device.
pub(super) async fn halve_and_reopen(
    local: &mut LocalModel,
    batch: usize,
) -> Result<(usize, String), String> {
    local.gpu_room.prompts = (batch / 2).max(1);
    local.gpu = GpuSlot::Untried;
    let label = ensure(local)
        .await
        .map_err(|why| format!("no new device: {why}"))?;
    Ok((local.gpu_room.prompts, label))
}

/// The model's weights on a WebGPU device, or why there are none.
#[derive(Default)]
pub enum GpuSlot {
    #[default]
    Untried,
    Ready(Box<GpuModel>),
    Failed(String),
}

/// Why the GPU cannot be used, worded for the panel (crates/infer's NoAdapter text speaks of
/// Vulkan drivers and CLI flags, and wgpu's lists backends not compiled in: noise in a browser).
pub fn reason(e: &GpuError) -> String {
    match e {
        GpuError::NoAdapter(_) => "this worker got no WebGPU adapter (WebGPU is disabled in this browser, or it has no usable GPU or driver)".into(),
        other => other.to_string(),
    }
}

/// The adapter as the panel shows it (the browser often hides the adapter's name from wgpu:
/// the panel's WebGPU line has the vendor and architecture the worker's probe read).
pub fn label(g: &GpuModel) -> String {
    let s = &g.context().summary;
    let name = if s.name.trim().is_empty() {
        "the worker's adapter"
    } else {
        s.name.as_str()
    };
    let kind = if s.is_cpu() {
        "a CPU emulation of a GPU"
    } else {
        s.device_type.as_str()
    };
    format!("WebGPU: {name} ({kind})")
}

/// Bytes of the model's weights on the GPU (quantized, as in the file).
pub fn weight_bytes(local: &LocalModel) -> u64 {
    match &local.gpu {
        GpuSlot::Ready(g) => g.uploaded_bytes(),
        _ => 0,
    }
}

/// Makes sure the weights are on a device (opening one and uploading them the first time, or
/// again after a failure): the adapter label, or why the GPU cannot be used.
pub async fn ensure(local: &mut LocalModel) -> Result<String, String> {
    if let GpuSlot::Ready(g) = &local.gpu {
        return Ok(label(g));
    }
    // Drop a failed device before asking for a new one.
    local.gpu = GpuSlot::Untried;
    let uploaded = match GpuContext::new().await {
        Ok(ctx) => GpuModel::upload(ctx, &local.model),
        Err(e) => Err(e),
    };
    match uploaded {
        Ok(g) => {
            let l = label(&g);
            local.gpu = GpuSlot::Ready(Box::new(g));
            Ok(l)
        }
        Err(e) => {
            let why = reason(&e);
            local.gpu = GpuSlot::Failed(why.clone());
            Err(why)
        }
    }
}

/// Bytes of GPU buffers the backend holds for this model (weights + batch workspace).
pub fn device_bytes(local: &LocalModel) -> u64 {
    match &local.gpu {
        GpuSlot::Ready(g) => g.device_bytes(),
        _ => 0,
    }
}

/// Destroys the device, as a driver reset would (the recovery path's end-to-end test).
pub fn lose_device(local: &LocalModel) -> bool {
    match &local.gpu {
        GpuSlot::Ready(g) => {
            g.context().simulate_loss();
            true
        }
        _ => false,
    }
}

/// Why a GPU step (of utilities or of answers) failed.
pub(super) enum StepError {
    /// A prompt no backend can take (too long for the model, a bad template).
    Prompt(String),
    /// The GPU failed on a step of this many prompts.
    Gpu(GpuError, usize),
}

/// Why smaller steps did not get a run going again after the device ran out of memory.
pub(super) enum GaveUp {
    Prompt(String),
    Gpu(String),
}

/// After a step of `batch` prompts ran out of memory: steps of half as many on a new device,
/// halved again while they still run out (the run keeps the room that fitted). The step's value,
/// that room and the device's label; or why not.
pub(super) async fn in_smaller_steps<T>(
    local: &mut LocalModel,
    mut batch: usize,
    mut step: impl AsyncFnMut(&LocalModel) -> Result<T, StepError>,
) -> Result<(T, usize, String), GaveUp> {
    loop {
        let (room, label) = halve_and_reopen(local, batch).await.map_err(GaveUp::Gpu)?;
        match step(local).await {
            Ok(value) => return Ok((value, room, label)),
            Err(StepError::Prompt(e)) => return Err(GaveUp::Prompt(e)),
            Err(StepError::Gpu(GpuError::OutOfMemory(_), b)) if b > 1 => batch = b,
            Err(StepError::Gpu(e, b)) => {
                return Err(GaveUp::Gpu(format!("in steps of {b} on a new device: {e}")))
            }
        }
    }
}

/// Scores the next batch on the GPU; the number of prompt tokens.
async fn step(local: &LocalModel, job: &mut UtilityJob) -> Result<usize, StepError> {
    let GpuSlot::Ready(g) = &local.gpu else {
        return Err(StepError::Gpu(
            GpuError::DeviceLost("no WebGPU device".into()),
            0,
        ));
    };
    let target = NoResponseScorer::new(&local.model, &local.tokenizer, PromptTemplate::default())
        .map_err(|e| StepError::Prompt(e.to_string()))?
        .target_token();
    let prompts = job
        .next_prompts(
            local,
            local
                .gpu_room
                .batch(STEP_PROMPTS.min(g.max_batch_prompts())),
            g.max_batch_tokens(),
        )
        .map_err(StepError::Prompt)?;
    if prompts.is_empty() {
        return Ok(0);
    }
    let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
    if let Some(e) = local.gpu_room.simulated_failure(refs.len()) {
        return Err(StepError::Gpu(e, refs.len()));
    }
    let out = g
        .prefill(&local.model, &refs)
        .await
        .map_err(|e| StepError::Gpu(e, refs.len()))?;
    let tokens = prompts.iter().map(Vec::len).sum();
    job.record(
        out.last_logits.iter().map(|l| token_probability(l, target)),
        tokens,
    );
    Ok(tokens)
}

/// What one GPU step came to.
pub enum Outcome {
    Done(usize),
    /// The batch failed, was retried on a new device and succeeded.
    Recovered(usize, BackendInfo),
    /// The GPU failed twice; the run goes on on the CPU (allowed by the user).
    ToCpu(BackendInfo),
    /// The GPU failed twice; the run is paused (Resume continues on the CPU).
    Paused(BackendInfo),
    Failed(String),
}

/// One GPU step with the recovery policy.
pub async fn step_with_recovery(ws: &mut Workspace) -> Outcome {
    let (Some(local), Some(job)) = (ws.local.as_mut(), ws.job.as_mut()) else {
        return Outcome::Failed("nothing to compute".into());
    };
    let (first, batch) = match step(local, job).await {
        Ok(n) => return Outcome::Done(n),
        Err(StepError::Prompt(e)) => return Outcome::Failed(e),
        Err(StepError::Gpu(e, batch)) => (e, batch),
    };
    let failure = if matches!(first, GpuError::OutOfMemory(_)) && batch > 1 {
        let smaller = in_smaller_steps(local, batch, async |l: &LocalModel| step(l, job).await);
        match smaller.await {
            Ok((n, room, label)) => {
                return Outcome::Recovered(
                    n,
                    BackendInfo {
                        gpu: true,
                        label,
                        reason: format!(
                            "the WebGPU device ran out of memory on a batch of {batch} passages; \
                             batches of {room} on a new device worked, and the run goes on with them"
                        ),
                    },
                )
            }
            Err(GaveUp::Prompt(e)) => return Outcome::Failed(e),
            Err(GaveUp::Gpu(why)) => format!("{first}; {why}"),
        }
    } else if first.is_device_failure() {
        // Let the failed device go, so `ensure` opens a new one.
        local.gpu = GpuSlot::Untried;
        match ensure(local).await {
            Ok(l) => match step(local, job).await {
                Ok(n) => {
                    return Outcome::Recovered(
                        n,
                        BackendInfo {
                            gpu: true,
                            label: l,
                            reason: format!(
                                "the WebGPU device failed mid-run ({first}); the batch was retried on a new device, which worked"
                            ),
                        },
                    )
                }
                Err(StepError::Prompt(e)) => return Outcome::Failed(e),
                Err(StepError::Gpu(again, _)) => {
                    format!("{first}; again on a new device: {again}")
                }
            },
            Err(why) => format!("{first}; no new device: {why}"),
        }
    } else {
        reason(&first)
    };
    local.gpu = GpuSlot::Failed(failure.clone());
    job.use_backend(CPU_LABEL, false);
    let kept = job.progress().done;
    if job.cpu_fallback {
        Outcome::ToCpu(BackendInfo {
            gpu: false,
            label: CPU_LABEL.into(),
            reason: format!(
                "WebGPU failed mid-run ({failure}); continuing on the CPU as allowed, the {kept} passages already computed are kept"
            ),
        })
    } else {
        job.paused = true;
        Outcome::Paused(BackendInfo {
            gpu: false,
            label: CPU_LABEL.into(),
            reason: format!(
                "WebGPU failed mid-run ({failure}); paused with the {kept} passages already computed kept: Resume continues on the CPU, Cancel drops them"
            ),
        })
    }
}

/// The GPU path for callers outside the worker's loop (the wasm test of the recovery path).
impl Workspace {
    /// Puts the open model's weights on a WebGPU device (once): the adapter label, or why not.
    pub async fn gpu_ensure(&mut self) -> Result<String, String> {
        match self.local.as_mut() {
            Some(local) => ensure(local).await,
            None => Err("pick a GGUF model first".into()),
        }
    }

    /// Destroys the device, as a driver reset would; false when no device is held.
    pub fn gpu_lose(&self) -> bool {
        self.local.as_ref().is_some_and(lose_device)
    }

    /// Makes GPU batches of more than `prompts` passages fail as out of memory (tests).
    pub fn gpu_simulate_memory_for(&mut self, prompts: usize) {
        if let Some(local) = self.local.as_mut() {
            local.gpu_room.simulated = prompts;
        }
    }

    /// Prompts a GPU batch may hold now (`usize::MAX` until the device ran out of memory).
    pub fn gpu_batch_room(&self) -> Option<usize> {
        self.local.as_ref().map(|l| l.gpu_room.prompts)
    }

    /// One step of the running job on the GPU, with the recovery policy.
    pub async fn gpu_step(&mut self) -> Outcome {
        step_with_recovery(self).await
    }

    /// Bytes of GPU buffers held for the open model.
    pub fn gpu_bytes(&self) -> u64 {
        self.local.as_ref().map_or(0, device_bytes)
    }
}
