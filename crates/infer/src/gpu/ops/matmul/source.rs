//! The matmul's WGSL, assembled per weight type: a tile shader (matmul.wgsl's 64x64 tile,
//! matmul_large.wgsl's 128x128 one or its 192-row wide form), its inner loops written out, then
//! dequant.wgsl's functions and the `dequant`/`dequant8` aliases for the type.

use crate::gguf::GgmlType;
use crate::gpu::layout::{dequant8_fn, dequant_fn, GPU_TYPES};

const DEQUANT_WGSL: &str = include_str!("dequant.wgsl");
const MATMUL_WGSL: &str = include_str!("matmul.wgsl");
const MATMUL_LARGE_WGSL: &str = include_str!("matmul_large.wgsl");

/// The WGSL source of the matmul for one weight type: dequant.wgsl's functions, a `dequant`
/// and `dequant8` alias for the type, then the tile shader (which declares the `w` binding they read).
pub fn matmul_source(ty: GgmlType) -> String {
    matmul_source_from(MATMUL_WGSL, ty)
}

/// The WGSL source of the large-tile matmul (matmul_large.wgsl) for one weight type.
pub fn matmul_large_source(ty: GgmlType) -> String {
    matmul_source_from(MATMUL_LARGE_WGSL, ty)
}

/// The wide tile (192 weight rows x 128 tokens, 384 threads, 20 KiB of workgroup memory):
/// matmul_large.wgsl with TN = 192. SmolLM2-135M's 576-, 960-, 1,536- and 3,072-row
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
pub(crate) fn wide_tile_fits(limits: &wgpu::Limits) -> bool {
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

/// Every tile's source for every weight type, labelled (all_shader_sources' first part).
pub(crate) fn sources() -> Vec<(String, String)> {
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
    out
}
