//! ragscope-infer: GGUF reader, tokenizers, CPU reference forward pass (wgpu backend: later issue).
