//! The adapter, device and compiled kernels. The device is requested with the adapter's real
//! limits (not WebGPU's defaults), so bindings can use all the storage-buffer size it offers.

use super::error::GpuError;
use super::layout::{dequant8_fn, dequant_fn, gpu_type_index, GPU_TYPES};
use crate::gguf::GgmlType;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

const DEQUANT_WGSL: &str = include_str!("shaders/dequant.wgsl");
const MATMUL_WGSL: &str = include_str!("shaders/matmul.wgsl");
const MATMUL_LARGE_WGSL: &str = include_str!("shaders/matmul_large.wgsl");
const RMS_NORM_WGSL: &str = include_str!("shaders/rms_norm.wgsl");
const ROPE_WGSL: &str = include_str!("shaders/rope.wgsl");
const ELEMENTWISE_WGSL: &str = include_str!("shaders/elementwise.wgsl");
const ATTENTION_WGSL: &str = include_str!("shaders/attention.wgsl");
const SOFTMAX_WGSL: &str = include_str!("shaders/softmax.wgsl");
const DECODE_ATTENTION_WGSL: &str = include_str!("shaders/decode_attention.wgsl");
const ARGMAX_WGSL: &str = include_str!("shaders/argmax.wgsl");

/// What a binding is (explicit layouts: unused bindings still take a slot).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Slot {
    Uniform,
    Read,
    ReadWrite,
}

#[derive(Clone)]
pub(crate) struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub slots: Vec<Slot>,
}

/// Shared handle to lazily compiled kernels: `Arc` natively (contexts cross threads), `Rc` in
/// the browser, where wgpu's handles are neither `Send` nor `Sync` and one worker owns them.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Shared<T> = Arc<T>;
#[cfg(target_arch = "wasm32")]
pub(crate) type Shared<T> = std::rc::Rc<T>;

/// One matmul tile's kernels, one per weight type, each compiled when a product of that type
/// first needs it: a model uses two to four of the eleven types, and compiling a pipeline costs
/// seconds on a software adapter (SwiftShader compiles each with LLVM) and a noticeable part
/// of opening a device on a real one. Compile errors then surface as the device's uncaptured
/// error, reported after the batch (GpuContext::take_failure).
pub(crate) struct LazyMatmuls {
    device: wgpu::Device,
    label: &'static str,
    source: fn(GgmlType) -> String,
    kernels: [OnceLock<Kernel>; GPU_TYPES.len()],
}

impl LazyMatmuls {
    fn new(device: &wgpu::Device, label: &'static str, source: fn(GgmlType) -> String) -> Self {
        LazyMatmuls {
            device: device.clone(),
            label,
            source,
            kernels: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// The kernel for `ty` (every type has one: see [`gpu_type_index`]).
    pub fn get(&self, ty: GgmlType) -> &Kernel {
        self.kernels[gpu_type_index(ty)].get_or_init(|| {
            use Slot::*;
            let label = format!("{}_{}", self.label, ty.name());
            let m = matmul_module(&self.device, &label, &(self.source)(ty));
            kernel(&self.device, &m, "main", &[Uniform, Read, Read, ReadWrite])
        })
    }
}

/// The compiled kernels: one matmul per weight type (dequant function + tile shader).
#[derive(Clone)]
pub(crate) struct Kernels {
    pub matmul: Shared<LazyMatmuls>,
    /// The 128x128-tile matmul per weight type, for products with many tiles (engine.rs
    /// `matmul_plan`).
    pub matmul_large: Shared<LazyMatmuls>,
    /// The wide tile's kernels; `None` in the browser (its batches stay below the wide tile's
    /// token threshold) and where the device's limits do not fit it (`wide_tile_fits`).
    pub matmul_wide: Option<Shared<LazyMatmuls>>,
    pub rms_norm: Kernel,
    pub rope: Kernel,
    pub bias: Kernel,
    pub residual: Kernel,
    /// The residual add of a split-K product's two planes.
    pub residual_split: Kernel,
    pub swiglu: Kernel,
    /// Column slice of wider rows, and SwiGLU/GeGLU over gate|up rows (the fused projections).
    pub split: Kernel,
    pub swiglu_halves: Kernel,
    pub geglu_halves: Kernel,
    pub gather: Kernel,
    pub attention: Kernel,
    /// The attention kernel for heads of 129 to 256 values.
    pub attention_wide: Kernel,
    pub softmax: Kernel,
    pub scatter: Kernel,
    pub geglu: Kernel,
    pub decode_attention: Kernel,
    pub argmax: Kernel,
}

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
        self.kernels.matmul_wide.is_some()
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
        for (label, src) in all_shader_sources() {
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

fn layout_entries(slots: &[Slot]) -> Vec<wgpu::BindGroupLayoutEntry> {
    slots
        .iter()
        .enumerate()
        .map(|(i, s)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match s {
                    Slot::Uniform => wgpu::BufferBindingType::Uniform,
                    Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Slot::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect()
}

pub(crate) fn kernel(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    entry: &str,
    slots: &[Slot],
) -> Kernel {
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(entry),
        entries: &layout_entries(slots),
    });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(entry),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&pl),
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    });
    Kernel {
        pipeline,
        layout,
        slots: slots.to_vec(),
    }
}

/// The WGSL source of the matmul for one weight type: dequant.wgsl's functions, a `dequant`
/// and `dequant8` alias for the type, then the tile shader (which declares the `w` binding they read).
pub fn matmul_source(ty: GgmlType) -> String {
    matmul_source_from(MATMUL_WGSL, ty)
}

/// The WGSL source of the large-tile matmul (shaders/matmul_large.wgsl) for one weight type.
pub fn matmul_large_source(ty: GgmlType) -> String {
    matmul_source_from(MATMUL_LARGE_WGSL, ty)
}

/// The wide tile (192 weight rows x 128 tokens, 384 threads, 20 KiB of workgroup memory):
/// shaders/matmul_large.wgsl with TN = 192. SmolLM2-135M's 576-, 960-, 1,536- and 3,072-row
/// products are whole multiples of 192, where the 128-row tile leaves a half-empty last tile.
pub fn matmul_wide_source(ty: GgmlType) -> String {
    matmul_source_from(&matmul_wide_shader(), ty)
}

fn matmul_wide_shader() -> String {
    MATMUL_LARGE_WGSL
        .replace("const TN: u32 = 128u;", "const TN: u32 = 192u;")
        .replace("@workgroup_size(16, 16, 1)", "@workgroup_size(16, 24, 1)")
}

/// Whether the device can run the wide tile (above WebGPU's default limits of 256 invocations
/// and 16 KiB of workgroup memory: 384 threads, 2 x 16 K steps of 128 tokens and 192 rows).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
fn wide_tile_fits(limits: &wgpu::Limits) -> bool {
    limits.max_compute_invocations_per_workgroup >= 384
        && limits.max_compute_workgroup_size_y >= 24
        && limits.max_compute_workgroup_storage_size >= 16 * (128 + 192) * 4
}

/// A matmul shader module compiled without wgpu's runtime checks. naga otherwise clamps every
/// array index and bounds every loop with a counter; in the matmul's unrolled inner loops that
/// cost 1.3-1.5x on an H100 (measured with the 128x128 tile, gpu_kernels_bench --unchecked).
/// Only for the matmul shaders, whose every index is in range by construction (see their
/// headers: guarded or clamped loads, constant-bounded staging and tile indices, guarded
/// stores) and whose loops have constant or uniform trip counts. On the web the browser
/// applies its own checks whatever is asked here.
pub(crate) fn matmul_module(device: &wgpu::Device, label: &str, src: &str) -> wgpu::ShaderModule {
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(src.into()),
    };
    // SAFETY: the matmul shaders never index out of range and always terminate (above).
    unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
}

/// `matmul_source` for another tile shader (the kernel benchmark tries variants with it).
pub fn matmul_source_from(tile_shader: &str, ty: GgmlType) -> String {
    format!(
        "{}\n{DEQUANT_WGSL}\nfn dequant(row: u32, k: u32) -> f32 {{\n    return {}(row, k);\n}}\n\
         fn dequant8(row: u32, k: u32) -> array<f32, 8> {{\n    return {}(row, k);\n}}\n",
        unroll(tile_shader),
        dequant_fn(ty),
        dequant8_fn(ty)
    )
}

/// attention.wgsl for heads up to 256 values (the key tiles then hold 4 keys: they stay 256
/// vec4s of keys and as many of values).
fn attention_wide_source() -> String {
    ATTENTION_WGSL
        .replace("const MAX_HD: u32 = 128u;", "const MAX_HD: u32 = 256u;")
        .replace("const MAX_HD4: u32 = 32u;", "const MAX_HD4: u32 = 64u;")
}

/// Expands `// @unroll N ...` … `// @end` blocks: the lines between are written N times with
/// `#` replaced by 0..N-1. WGSL has no unroll attribute, and naga bounds every loop with an
/// iteration counter that the driver then cannot unroll away: the matmul's inner loops are
/// written out instead.
pub fn unroll(src: &str) -> String {
    let mut out = String::with_capacity(src.len() * 4);
    let mut block: Option<(usize, Vec<&str>)> = None;
    for line in src.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("// @unroll ") {
            let n = rest
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1);
            block = Some((n, Vec::new()));
        } else if t.starts_with("// @end") {
            if let Some((n, lines)) = block.take() {
                for i in 0..n {
                    for l in &lines {
                        out.push_str(&l.replace('#', &i.to_string()));
                        out.push('\n');
                    }
                }
            }
        } else if let Some((_, lines)) = block.as_mut() {
            lines.push(line);
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Every shader module's source with a label (compiled in Chrome by the wasm test too).
pub fn all_shader_sources() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = GPU_TYPES
        .iter()
        .map(|&t| (format!("matmul_{}", t.name()), matmul_source(t)))
        .collect();
    out.extend(
        GPU_TYPES
            .iter()
            .map(|&t| (format!("matmul_large_{}", t.name()), matmul_large_source(t))),
    );
    out.extend(
        GPU_TYPES
            .iter()
            .map(|&t| (format!("matmul_wide_{}", t.name()), matmul_wide_source(t))),
    );
    out.push(("rms_norm".into(), RMS_NORM_WGSL.into()));
    out.push(("rope".into(), ROPE_WGSL.into()));
    out.push(("elementwise".into(), ELEMENTWISE_WGSL.into()));
    out.push(("attention".into(), ATTENTION_WGSL.into()));
    out.push(("attention_wide".into(), attention_wide_source()));
    out.push(("softmax".into(), SOFTMAX_WGSL.into()));
    out.push(("decode_attention".into(), DECODE_ATTENTION_WGSL.into()));
    out.push(("argmax".into(), ARGMAX_WGSL.into()));
    out
}

impl Kernels {
    async fn compile(device: &wgpu::Device) -> Result<Kernels, GpuError> {
        use Slot::*;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = |label: &str, src: &str| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(src.into()),
            })
        };
        let matmul = Shared::new(LazyMatmuls::new(device, "matmul", matmul_source));
        let matmul_large = Shared::new(LazyMatmuls::new(
            device,
            "matmul_large",
            matmul_large_source,
        ));
        #[cfg(not(target_arch = "wasm32"))]
        let matmul_wide = wide_tile_fits(&device.limits())
            .then(|| Shared::new(LazyMatmuls::new(device, "matmul_wide", matmul_wide_source)));
        #[cfg(target_arch = "wasm32")]
        let matmul_wide = None;
        let rms = module("rms_norm", RMS_NORM_WGSL);
        let rope = module("rope", ROPE_WGSL);
        let ew = module("elementwise", ELEMENTWISE_WGSL);
        let att = module("attention", ATTENTION_WGSL);
        let att_wide = module("attention_wide", &attention_wide_source());
        let sm = module("softmax", SOFTMAX_WGSL);
        let da = module("decode_attention", DECODE_ATTENTION_WGSL);
        let am = module("argmax", ARGMAX_WGSL);
        let ew_slots = [Uniform, ReadWrite, Read, Read];
        let k = Kernels {
            matmul,
            matmul_large,
            matmul_wide,
            rms_norm: kernel(device, &rms, "main", &[Uniform, Read, Read, ReadWrite]),
            rope: kernel(
                device,
                &rope,
                "main",
                &[Uniform, ReadWrite, Read, Read, Read],
            ),
            bias: kernel(device, &ew, "bias", &ew_slots),
            residual: kernel(device, &ew, "residual", &ew_slots),
            residual_split: kernel(device, &ew, "residual_split", &ew_slots),
            swiglu: kernel(device, &ew, "swiglu", &ew_slots),
            split: kernel(device, &ew, "split", &ew_slots),
            swiglu_halves: kernel(device, &ew, "swiglu_halves", &ew_slots),
            geglu_halves: kernel(device, &ew, "geglu_halves", &ew_slots),
            gather: kernel(device, &ew, "gather", &ew_slots),
            attention: kernel(
                device,
                &att,
                "main",
                &[Uniform, Read, Read, Read, Read, ReadWrite],
            ),
            attention_wide: kernel(
                device,
                &att_wide,
                "main",
                &[Uniform, Read, Read, Read, Read, ReadWrite],
            ),
            softmax: kernel(device, &sm, "main", &[Uniform, Read, Read, ReadWrite]),
            scatter: kernel(device, &ew, "scatter", &ew_slots),
            geglu: kernel(device, &ew, "geglu", &ew_slots),
            decode_attention: kernel(
                device,
                &da,
                "main",
                &[Uniform, Read, Read, Read, Read, ReadWrite],
            ),
            argmax: kernel(device, &am, "main", &[Uniform, Read, ReadWrite]),
        };
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Device(format!("compiling the shaders: {e}")));
        }
        Ok(k)
    }
}
