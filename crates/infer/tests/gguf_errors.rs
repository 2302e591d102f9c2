//! Clear errors (never panics) for broken GGUF files: bad magic, unsupported version, truncation
//! anywhere, unsupported tensor types and architectures, and tensor shapes that contradict the
//! metadata. Files are built byte by byte here so each defect is exactly the one named.

use ragscope_infer::gguf::{GgufFile, MetadataValue, VecSource};
use ragscope_infer::{InferError, Model};

struct Builder {
    kv: Vec<u8>,
    n_kv: u64,
    infos: Vec<u8>,
    n_tensors: u64,
    data: Vec<u8>,
}

fn s(out: &mut Vec<u8>, v: &str) {
    out.extend((v.len() as u64).to_le_bytes());
    out.extend(v.as_bytes());
}

impl Builder {
    fn new() -> Self {
        Builder {
            kv: Vec::new(),
            n_kv: 0,
            infos: Vec::new(),
            n_tensors: 0,
            data: Vec::new(),
        }
    }
    fn kv_str(mut self, k: &str, v: &str) -> Self {
        s(&mut self.kv, k);
        self.kv.extend(8u32.to_le_bytes());
        s(&mut self.kv, v);
        self.n_kv += 1;
        self
    }
    fn kv_u32(mut self, k: &str, v: u32) -> Self {
        s(&mut self.kv, k);
        self.kv.extend(4u32.to_le_bytes());
        self.kv.extend(v.to_le_bytes());
        self.n_kv += 1;
        self
    }
    fn kv_f32(mut self, k: &str, v: f32) -> Self {
        s(&mut self.kv, k);
        self.kv.extend(6u32.to_le_bytes());
        self.kv.extend(v.to_le_bytes());
        self.n_kv += 1;
        self
    }
    fn kv_str_array(mut self, k: &str, items: &[&str]) -> Self {
        s(&mut self.kv, k);
        self.kv.extend(9u32.to_le_bytes());
        self.kv.extend(8u32.to_le_bytes());
        self.kv.extend((items.len() as u64).to_le_bytes());
        for i in items {
            s(&mut self.kv, i);
        }
        self.n_kv += 1;
        self
    }
    /// An F32 (type 0) or other-typed tensor with `n_bytes` of data.
    fn tensor(mut self, name: &str, dims: &[u64], ty: u32, n_bytes: usize) -> Self {
        s(&mut self.infos, name);
        self.infos.extend((dims.len() as u32).to_le_bytes());
        for d in dims {
            self.infos.extend(d.to_le_bytes());
        }
        self.infos.extend(ty.to_le_bytes());
        let offset = self.data.len().div_ceil(32) * 32;
        self.data.resize(offset, 0);
        self.infos.extend((offset as u64).to_le_bytes());
        // F32 tensors get small deterministic values (a forward pass then has something to
        // compute); other types stay zero.
        let mut state = 0x9E37_79B9u32 ^ (self.n_tensors as u32).wrapping_mul(2654435761);
        for _ in 0..n_bytes / 4 {
            let v = if ty == 0 {
                state = state.wrapping_mul(1664525).wrapping_add(1013904223);
                ((state >> 8) as f32 / (1u32 << 24) as f32 - 0.5)
                    * if name.ends_with("norm.weight") {
                        0.2
                    } else {
                        2.0
                    }
                    + if name.ends_with("norm.weight") {
                        1.0
                    } else {
                        0.0
                    }
            } else {
                0.0
            };
            self.data
                .extend(if ty == 0 { v.to_le_bytes() } else { [0u8; 4] });
        }
        self.data.extend(std::iter::repeat_n(0u8, n_bytes % 4));
        self.n_tensors += 1;
        self
    }
    fn build(&self, version: u32) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(version.to_le_bytes());
        out.extend(self.n_tensors.to_le_bytes());
        out.extend(self.n_kv.to_le_bytes());
        out.extend(&self.kv);
        out.extend(&self.infos);
        out.resize(out.len().div_ceil(32) * 32, 0);
        out.extend(&self.data);
        out
    }
}

fn parse(bytes: Vec<u8>) -> Result<GgufFile, InferError> {
    GgufFile::read(&VecSource::new(bytes), "test.gguf")
}

/// A complete one-layer model (d=8, 2 heads of 4, ff=8, 2 tokens) in F32.
fn tiny_model(arch: &str, q_rows: u64) -> Builder {
    let d = 8u64;
    let f = |b: Builder, name: &str, dims: &[u64]| {
        let n: u64 = dims.iter().product();
        b.tensor(name, dims, 0, n as usize * 4)
    };
    let mut b = Builder::new()
        .kv_str("general.architecture", arch)
        .kv_u32(&format!("{arch}.embedding_length"), 8)
        .kv_u32(&format!("{arch}.block_count"), 1)
        .kv_u32(&format!("{arch}.feed_forward_length"), 8)
        .kv_u32(&format!("{arch}.attention.head_count"), 2)
        .kv_f32(&format!("{arch}.attention.layer_norm_rms_epsilon"), 1e-5)
        .kv_str("tokenizer.ggml.model", "gpt2")
        .kv_str("tokenizer.ggml.pre", "gpt-2")
        .kv_str_array("tokenizer.ggml.tokens", &["a", "b"])
        .kv_str_array("tokenizer.ggml.merges", &[]);
    b = f(b, "token_embd.weight", &[d, 2]);
    b = f(b, "blk.0.attn_norm.weight", &[d]);
    b = f(b, "blk.0.attn_q.weight", &[d, q_rows]);
    b = f(b, "blk.0.attn_k.weight", &[d, d]);
    b = f(b, "blk.0.attn_v.weight", &[d, d]);
    b = f(b, "blk.0.attn_output.weight", &[d, d]);
    b = f(b, "blk.0.ffn_norm.weight", &[d]);
    b = f(b, "blk.0.ffn_gate.weight", &[d, 8]);
    b = f(b, "blk.0.ffn_up.weight", &[d, 8]);
    b = f(b, "blk.0.ffn_down.weight", &[8, d]);
    b = f(b, "output_norm.weight", &[d]);
    b
}

fn load(bytes: Vec<u8>) -> Result<Model, InferError> {
    let src = VecSource::new(bytes);
    let g = GgufFile::read(&src, "test.gguf")?;
    Model::load(&g, &src)
}

#[test]
fn a_valid_tiny_model_loads_and_runs() {
    let bytes = tiny_model("llama", 8).build(3);
    let g = parse(bytes.clone()).unwrap();
    assert_eq!(g.version, 3);
    assert_eq!(
        g.get("tokenizer.ggml.tokens")
            .and_then(MetadataValue::as_array)
            .map(|a| a.len()),
        Some(2)
    );
    let m = load(bytes).unwrap();
    let out = m.prefill(&[&[0, 1], &[1]]).unwrap();
    assert_eq!(out.last_logits.len(), 2);
    assert_eq!(out.last_logits[0].len(), 2);
    // Version 2 has the same layout.
    assert!(parse(tiny_model("llama", 8).build(2)).is_ok());
}

#[test]
fn bad_magic() {
    let mut bytes = tiny_model("llama", 8).build(3);
    bytes[..4].copy_from_slice(b"GGML");
    let e = parse(bytes).unwrap_err();
    assert!(matches!(e, InferError::BadMagic { .. }), "{e}");
    assert!(
        e.to_string().contains("test.gguf") && e.to_string().contains("not a GGUF file"),
        "{e}"
    );
}

#[test]
fn unsupported_version() {
    let e = parse(tiny_model("llama", 8).build(1)).unwrap_err();
    assert!(
        matches!(e, InferError::UnsupportedVersion { version: 1, .. }),
        "{e}"
    );
}

#[test]
fn truncation_at_every_length_is_an_error_not_a_panic() {
    let bytes = tiny_model("llama", 8).build(3);
    for len in 0..bytes.len() {
        let r = parse(bytes[..len].to_vec());
        let e = r
            .err()
            .unwrap_or_else(|| panic!("truncated to {len} bytes parsed"));
        assert!(
            matches!(
                e,
                InferError::Truncated { .. } | InferError::Malformed { .. }
            ),
            "truncated to {len}: unexpected {e}"
        );
        assert!(e.to_string().contains("test.gguf"), "{e}");
    }
}

#[test]
fn unsupported_tensor_type_names_the_tensor_and_type() {
    // Type 10 is Q2_K (256-weight blocks of 84 bytes): valid ggml, not supported here.
    let bytes = Builder::new()
        .tensor("blk.0.attn_q.weight", &[256, 1], 10, 84)
        .build(3);
    let e = parse(bytes).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, InferError::UnsupportedType { type_id: 10, .. }),
        "{msg}"
    );
    assert!(
        msg.contains("blk.0.attn_q.weight") && msg.contains("Q2_K"),
        "{msg}"
    );
}

#[test]
fn unsupported_architecture() {
    let e = load(tiny_model("gpt2", 8).build(3)).unwrap_err();
    assert!(
        matches!(e, InferError::UnsupportedArchitecture { ref arch, .. } if arch == "gpt2"),
        "{e}"
    );
}

#[test]
fn tensor_shape_contradicting_metadata() {
    let e = load(tiny_model("llama", 6).build(3)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("blk.0.attn_q.weight") && msg.contains("[8, 6]") && msg.contains("[8, 8]"),
        "{msg}"
    );
}

#[test]
fn tensor_data_past_the_end_is_truncation() {
    let mut bytes = tiny_model("llama", 8).build(3);
    bytes.truncate(bytes.len() - 1);
    let e = parse(bytes).unwrap_err();
    assert!(matches!(e, InferError::Truncated { .. }), "{e}");
    assert!(e.to_string().contains("output_norm.weight"), "{e}");
}

#[test]
fn absurd_counts_are_rejected_before_allocating() {
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(u64::MAX.to_le_bytes());
    assert!(parse(bytes).is_err());
    // A string claiming 2^60 bytes.
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.extend((1u64 << 60).to_le_bytes());
    bytes.extend([0u8; 32]);
    assert!(matches!(parse(bytes), Err(InferError::Truncated { .. })));
}

#[test]
fn corrupted_bytes_never_panic() {
    // Flip bytes all over a valid file: parsing, loading, tokenizer construction and a forward
    // pass either succeed or return an error.
    let base = tiny_model("llama", 8).build(3);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let mut bytes = base.clone();
        for _ in 0..1 + next() % 3 {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] = next() as u8;
        }
        let src = VecSource::new(bytes);
        let Ok(g) = GgufFile::read(&src, "fuzz.gguf") else {
            continue;
        };
        let _ =
            ragscope_infer::Tokenizer::from_gguf(&g).map(|t| t.encode("a b <s> ab", true, true));
        if let Ok(m) = Model::load(&g, &src) {
            let _ = m.prefill(&[&[0, 1, 1]]);
        }
    }
}

#[test]
fn smollm_and_mistral_are_llama_and_qwen2_uses_neox_rope() {
    let logits = |arch: &str| {
        let m = load(tiny_model(arch, 8).build(3)).unwrap();
        m.prefill(&[&[0, 1, 1, 0]]).unwrap().last_logits.remove(0)
    };
    let llama = logits("llama");
    assert!(llama.iter().any(|&v| v != 0.0));
    assert_eq!(logits("smollm"), llama);
    assert_eq!(logits("mistral"), llama);
    // Same weights, other RoPE pairing: different logits.
    assert_ne!(logits("qwen2"), llama);
}

/// A byte source that can only copy out ranges (like a browser `Blob`), never lend the whole file.
struct CopyOnlySource(Vec<u8>);

impl ragscope_infer::ByteSource for CopyOnlySource {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let s = offset as usize;
        let src = self
            .0
            .get(s..s + buf.len())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

#[test]
fn copy_only_sources_load_tensor_by_tensor_with_identical_results() {
    let bytes = tiny_model("llama", 8).build(3);
    let shared = load(bytes.clone()).unwrap();
    let src = CopyOnlySource(bytes);
    let g = GgufFile::read(&src, "blob.gguf").unwrap();
    let copied = Model::load(&g, &src).unwrap();
    let p: &[u32] = &[1, 0, 1];
    assert_eq!(
        shared.prefill(&[p]).unwrap().last_logits,
        copied.prefill(&[p]).unwrap().last_logits
    );
}

#[test]
fn unknown_tensor_type_id_is_named_with_the_tensor() {
    // 99 is no ggml type at all (a newer or corrupt file).
    let bytes = Builder::new()
        .tensor("blk.3.ffn_up.weight", &[32, 1], 99, 32)
        .build(3);
    let e = parse(bytes).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, InferError::UnsupportedType { type_id: 99, .. }),
        "{msg}"
    );
    assert!(
        msg.contains("test.gguf") && msg.contains("blk.3.ffn_up.weight") && msg.contains("99"),
        "{msg}"
    );
}

#[test]
fn unsupported_architecture_message_lists_what_is_supported() {
    let msg = load(tiny_model("falcon", 8).build(3))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("test.gguf") && msg.contains("'falcon'") && msg.contains("llama"),
        "{msg}"
    );
}

/// A real model file cut short (an interrupted download) fails with the tensor that is missing
/// its bytes, never a panic; checked on SmolLM2-135M when the model cache has it.
#[test]
fn truncated_real_model_names_the_tensor() {
    #[path = "common/real.rs"]
    mod real;
    let Some(path) = real::model(real::SMOLLM2_FILE, "truncated real model") else {
        return;
    };
    let full = std::fs::read(&path).unwrap();
    for keep in [full.len() / 2, full.len() - 1] {
        let e = parse(full[..keep].to_vec()).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, InferError::Truncated { .. }), "{msg}");
        assert!(
            msg.contains("test.gguf") && msg.contains(".weight"),
            "{msg}"
        );
    }
    // Cut inside the metadata: the key being read is named.
    let e = parse(full[..4096].to_vec()).unwrap_err();
    assert!(
        matches!(
            e,
            InferError::Truncated { .. } | InferError::Malformed { .. }
        ),
        "{e}"
    );
}
