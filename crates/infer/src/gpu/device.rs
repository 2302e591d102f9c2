//! The adapter, the device and its compiled kernels. The device is requested with the
//! adapter's real limits (not WebGPU's defaults), so bindings can use all the storage-buffer
//! size it offers.

use super::error::GpuError;
use super::ops::Kernels;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The adapter as reported to the user.
#[derive(Debug, Clone)]
pub struct AdapterSummary {
    pub name: String,
    /// Vulkan, Metal, Dx12, BrowserWebGpu, ...
    pub backend: String,
    /// DiscreteGpu, IntegratedGpu, Cpu (lavapipe, SwiftShader), ...
    pub device_type: String,
    pub driver: String,
    pub shader_f16: bool,
    pub max_storage_binding: u64,
    pub max_buffer: u64,
}

impl AdapterSummary {
    /// True for software adapters (lavapipe/llvmpipe, SwiftShader): a CPU emulation.
    pub fn is_cpu(&self) -> bool {
        self.device_type == "Cpu"
    }
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {}", self.name, self.backend, self.device_type)?;
        if self.is_cpu() {
            write!(f, ": a CPU emulation of a GPU")?;
        }
        write!(
            f,
            "; max storage binding {} MiB)",
            self.max_storage_binding >> 20
        )
    }
}

/// A clone shares the device, its queue and its compiled kernels (wgpu's handles are
/// reference-counted): several models uploaded through clones pay for the shader compilation
/// once — in a browser on SwiftShader that is most of opening a device.
#[derive(Clone)]
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) kernels: Kernels,
    pub(crate) limits: wgpu::Limits,
    pub summary: AdapterSummary,
    lost: Arc<AtomicBool>,
    /// The first uncaptured error since the last check, and whether it was out of memory.
    error: Arc<Mutex<Option<(bool, String)>>>,
    binding_cap: Option<u64>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuContext({})", self.summary)
    }
}

impl GpuContext {
    async fn adapter() -> Result<wgpu::Adapter, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                apply_limit_buckets: false,
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))
    }

    /// The adapter `new` would use, without opening a device or compiling anything.
    pub async fn probe() -> Result<AdapterSummary, GpuError> {
        Ok(summarize(&Self::adapter().await?))
    }

    /// `probe` for native callers.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn probe_blocking() -> Result<AdapterSummary, GpuError> {
        pollster::block_on(Self::probe())
    }

    /// Finds an adapter (high-performance preference) and opens a device with its real limits.
    pub async fn new() -> Result<GpuContext, GpuError> {
        Self::open(wgpu::Features::empty()).await
    }

    /// `new`, plus timestamp queries where the adapter offers them (the kernel benchmark).
    pub async fn new_profiling() -> Result<GpuContext, GpuError> {
        Self::open(wgpu::Features::TIMESTAMP_QUERY).await
    }

    /// `new_profiling` for native callers.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_blocking_profiling() -> Result<GpuContext, GpuError> {
        pollster::block_on(Self::new_profiling())
    }

    /// True when the device runs the wide matmul tile (`wide_tile_fits`).
    pub fn has_wide_tile(&self) -> bool {
        self.kernels.matmul.wide.is_some()
    }

    /// True when the device was opened with timestamp queries.
    pub fn has_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    async fn open(wanted: wgpu::Features) -> Result<GpuContext, GpuError> {
        let adapter = Self::adapter().await?;
        let summary = summarize(&adapter);
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("ragscope"),
                required_features: wanted & adapter.features(),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(format!("requesting a device: {e}")))?;
        let lost = Arc::new(AtomicBool::new(false));
        let flag = lost.clone();
        device.set_device_lost_callback(move |_reason, _msg| flag.store(true, Ordering::SeqCst));
        let error = Arc::new(Mutex::new(None::<(bool, String)>));
        let sink = error.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut slot) = sink.lock() {
                if slot.is_none() {
                    let memory = matches!(e, wgpu::Error::OutOfMemory { .. });
                    *slot = Some((memory, e.to_string()));
                }
            }
        }));
        let kernels = Kernels::compile(&device).await?;
        Ok(GpuContext {
            device,
            queue,
            kernels,
            limits,
            summary,
            lost,
            error,
            binding_cap: None,
        })
    }

    /// `new` for native callers (blocks on wgpu's futures).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_blocking() -> Result<GpuContext, GpuError> {
        pollster::block_on(Self::new())
    }

    /// Largest storage binding in bytes (the device's, or a lower cap).
    pub fn max_binding(&self) -> u64 {
        let device = self
            .limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size);
        self.binding_cap.map_or(device, |c| c.min(device))
    }

    /// Keeps every binding at or below `bytes` (smaller than the device allows): models then
    /// split their matrices and batches as they would on a device with that limit.
    pub fn with_binding_cap(mut self, bytes: u64) -> Self {
        self.binding_cap = Some(bytes);
        self
    }

    /// The device was lost, or a command failed validation/out of memory since the last check.
    pub(crate) fn take_failure(&self) -> Option<GpuError> {
        if self.lost.load(Ordering::SeqCst) {
            return Some(GpuError::DeviceLost(
                "the GPU device was lost (driver reset or removal)".into(),
            ));
        }
        let msg = self.error.lock().ok().and_then(|mut s| s.take());
        msg.map(|(memory, msg)| match memory {
            true => GpuError::OutOfMemory(msg),
            false => GpuError::Device(msg),
        })
    }

    /// Compiles every shader module again and returns the compiler's error messages, labelled
    /// (the browser test runs this in Chrome, whose WGSL compiler is stricter than naga).
    pub async fn shader_errors(&self) -> Vec<String> {
        let mut errors = Vec::new();
        for (label, src) in super::ops::all_shader_sources() {
            let m = self
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&label),
                    source: wgpu::ShaderSource::Wgsl(src.into()),
                });
            let info = m.get_compilation_info().await;
            for msg in info.messages {
                if msg.message_type == wgpu::CompilationMessageType::Error {
                    errors.push(format!("{label}: {}", msg.message));
                }
            }
        }
        errors
    }

    /// Destroys the device, as a driver reset would (tests of the recovery path).
    pub fn simulate_loss(&self) {
        self.device.destroy();
        self.lost.store(true, Ordering::SeqCst);
    }
}

fn summarize(adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    let limits = adapter.limits();
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_string(),
        shader_f16: adapter.features().contains(wgpu::Features::SHADER_F16),
        max_storage_binding: limits.max_storage_buffer_binding_size,
        max_buffer: limits.max_buffer_size,
    }
}
