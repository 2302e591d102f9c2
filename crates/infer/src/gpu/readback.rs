//! Reading a buffer back: map it, wait for the mapping (natively by polling the device; in the
//! browser by returning to the event loop through the awaited channel), copy, unmap.

use super::device::GpuContext;
use super::error::GpuError;

pub(crate) async fn read_f32(
    ctx: &GpuContext,
    buf: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<f32>, GpuError> {
    Ok(read_u32(ctx, buf, bytes)
        .await?
        .into_iter()
        .map(f32::from_bits)
        .collect())
}

pub(crate) async fn read_u32(
    ctx: &GpuContext,
    buf: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<u32>, GpuError> {
    let (tx, rx) = futures_channel::oneshot::channel();
    buf.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
        let _ = tx.send(r);
    });
    #[cfg(not(target_arch = "wasm32"))]
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| match ctx.take_failure() {
            Some(f) => f,
            None => GpuError::Device(format!("waiting for the GPU: {e}")),
        })?;
    let mapped = rx.await.map_err(|_| {
        ctx.take_failure()
            .unwrap_or_else(|| GpuError::DeviceLost("the GPU dropped a readback".into()))
    })?;
    if mapped.is_err() {
        return Err(ctx
            .take_failure()
            .unwrap_or_else(|| GpuError::DeviceLost("mapping the results failed".into())));
    }
    let out = {
        let view = buf
            .get_mapped_range(0..bytes)
            .map_err(|e| GpuError::Device(format!("reading the results: {e}")))?;
        view.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    buf.unmap();
    Ok(out)
}
