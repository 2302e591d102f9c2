//! What can go wrong on the GPU path, worded for the user.

use crate::error::InferError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    #[error("no GPU adapter found ({0}); install a Vulkan driver (on Linux without a GPU: Mesa's lavapipe, Debian package mesa-vulkan-drivers) or use --backend cpu")]
    NoAdapter(String),
    #[error("the GPU backend does not support {0}")]
    Unsupported(String),
    #[error("the model does not fit the GPU: {0}")]
    TooLarge(String),
    #[error("{0}")]
    DeviceLost(String),
    #[error("GPU error: {0}")]
    Device(String),
    /// An allocation failed (wgpu's out-of-memory error): a smaller batch may fit.
    #[error("the GPU ran out of memory: {0}")]
    OutOfMemory(String),
}

impl GpuError {
    /// Whether a new device may do better: a lost device, a failed command, memory.
    pub fn is_device_failure(&self) -> bool {
        matches!(
            self,
            GpuError::DeviceLost(_) | GpuError::Device(_) | GpuError::OutOfMemory(_)
        )
    }
}

impl From<GpuError> for InferError {
    fn from(e: GpuError) -> Self {
        InferError::Forward(format!("GPU backend: {e}"))
    }
}
