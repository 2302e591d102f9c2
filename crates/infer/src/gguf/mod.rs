//! GGUF v2/v3 reading: header, metadata, tensor infos and block dequantization.

mod dequant;
mod ggml_type;
mod reader;
mod source;
mod value;

pub use dequant::dequantize_row;
pub use ggml_type::GgmlType;
pub use reader::{GgufFile, TensorInfo};
#[cfg(feature = "native")]
pub use source::MmapSource;
pub use source::{ByteSource, SharedBytes, TensorBytes, VecSource};
pub use value::MetadataValue;
