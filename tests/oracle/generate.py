#!/usr/bin/env python3
"""Writes the llama.cpp oracle fixtures for crates/infer.

    python tests/oracle/generate.py --out crates/infer/tests/fixtures

What it writes (all deterministic, seeded):
  * dequant.json       - random blocks of every supported ggml type and the `gguf` package's
                         dequantization of them (the reference for crates/infer's dequantizer).
  * <model>.gguf       - tiny random-weight models (d=64, 2 layers) written with gguf.GGUFWriter,
                         with a byte-level BPE vocabulary trained by `tokenizers` (or a SentencePiece
                         vocabulary trained by `sentencepiece`) and a real chat template.
  * <model>.json       - llama.cpp's (llama-cpp-python) token ids for hard strings, the chat-templated
                         UDCG prompt rendered by jinja2 (as transformers does) with its token ids, and
                         last-position logits + p(NO-RESPONSE) for a set of prompts. For quantized
                         models the logits come from llama.cpp run on the dequantized F32 twin (the
                         twin is written to a temporary directory, not committed); llama.cpp's run on
                         the quantized file itself is recorded too, to report how far it drifts.
  * summary.json       - what was generated, and the twin-vs-quantized deviation per model.

llama-f32.json also holds llama.cpp's p(NO-RESPONSE) for every passage of the UDCG anchor data
(<repo>/../shared/data/udcg/dataset_with_scores.json), which crates/cli's tests use.
Models are loaded with `use_extra_bufts = false` (see _no_extra_buffers).

Random weights need realistic scales or every logit is equal (REFERENCE.md section 10): norm
weights ~1, embeddings ~N(0,1), projections ~N(0, 1/fan_in), output ~4/sqrt(d).
"""

import argparse
import base64
import datetime
import json
import os
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHOR_DATA = os.path.join(HERE, "..", "..", "..", "shared", "data", "udcg", "dataset_with_scores.json")
ANCHOR_MODEL = "llama-f32"

SYSTEM_PROMPT = (
    "You are given a question and you must respond based on the provided documents. Respond "
    "directly without providing any premise or explanation. If none of the documents contain the "
    "answer, please respond with NO-RESPONSE. Do not try to respond based on your own knowledge."
)
USER_TEMPLATE = "Document: {text}\nQuestion: {question}\nAnswer:"
FIXED_NOW = datetime.datetime(2024, 7, 26, 12, 0, 0)

SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
]

CORPUS = [
    SYSTEM_PROMPT,
    "Document: France is a country in Western Europe. Its capital and largest city is Paris.",
    "Question: What is the capital of France?\nAnswer: Paris",
    "Question: Who wrote the novel? Answer: NO-RESPONSE",
    "The quick brown fox jumps over the lazy dog. The dog didn't care; it's a lazy dog.",
    "Berlin is the capital of Germany. Lyon is the third-largest city in France.",
    "In 1969, 3 astronauts flew 384,400 km to the Moon; 12 people walked on it by 1972.",
    "Numbers like 3.14159, 2.71828 and 1,000,000 appear in documents and tables.",
    "def main():\n    return 42  # the answer\n\n\nclass Foo:\n    pass\n",
    "Caf\u00e9, na\u00efve, r\u00e9sum\u00e9 and \u00fcber are words with accents.",
    "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002\u5317\u4eac\u6b22\u8fce\u4f60\u3002",
    "Emoji: \U0001F44D \U0001F389 \u2764\ufe0f are common in social media posts.",
    "You are a helpful assistant. You are Qwen, created by Alibaba Cloud.",
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face",
    "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n",
    "system user assistant ipython tool respond documents answer question knowledge",
] * 3

HARD_STRINGS = [
    "Hello world",
    "NO-RESPONSE",
    " NO-RESPONSE",
    "",
    " ",
    "\n",
    "  leading spaces and trailing   ",
    "tabs\tand\nnewlines\n\n\nmulti\r\nCRLF\r\n",
    "Numbers: 1 12 123 1234 12345 3.14159 1,000,000 2024-07-26",
    "Unicode: caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00dcn\u00efc\u00f6d\u00e9 \u00df\u1e9e",
    "CJK: \u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002\u5317\u4eac\u6b22\u8fce\u4f60",
    "Emoji: \U0001F44D\U0001F3FD \U0001F389\U0001F389 \U0001F468\u200d\U0001F469\u200d\U0001F467 \u2764\ufe0f",
    "Contractions: don't I'm we'll they've she'd IT'S You'RE",
    "Arabic \u0645\u0631\u062d\u0628\u0627 and Hindi \u0928\u092e\u0938\u094d\u0924\u0947",
    "    indented code():\n        return x  # comment\n\t\tdone",
    "punctuation!!! ??? ... --- ((nested)) [brackets] {braces} <angle> $100 +5 =6 ^2 ~3 |pipe|",
    "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>",
    "Mixed <|im_end|>in the middle<|eot_id|>and<|endoftext|> end",
    "<|im_start|><|im_start|>",
    "Document: Paris is the capital and most populous city of France.\nQuestion: What is the capital of France?\nAnswer:",
    "no\u00a0break\u00a0spaces\u3000ideographic\u2028line\u2029para \u00a0 x",
    "combining e\u0301 a\u0308 n\u0303, zwj a\u200db, zwnj a\u200cb, bom \ufeffx",
    "'s 'S ''' ' 'll 'LL x's X'S",
    "digits \u0661\u0662\u0663 \u00b2\u00b3 \u216b \u2460 \uff11\uff12 1\u00bd",
    "    \n\n    \t\t  \r\n \n  end",
    "a" * 300 + " " + "ab" * 100,
]

QA = [
    ("What is the capital of France?", "France is a country in Western Europe. Its capital and largest city is Paris."),
    ("What is the capital of France?", "Germany is a country in Central Europe. Berlin is its capital."),
    ("How far is the Moon?", "In 1969, 3 astronauts flew 384,400 km to the Moon."),
    ("Who wrote it?", "Caf\u00e9 \u6771\u4eac \U0001F44D \u2014 unrelated text\twith tabs\n\nand blank lines."),
    ("Is the dog lazy?", "The quick brown fox jumps over the lazy dog. The dog didn't care; it's a lazy dog. " * 3),
]


def train_bpe(vocab_size):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer=trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = model["vocab"]
    tokens = [None] * len(vocab)
    for t, i in vocab.items():
        tokens[i] = t
    assert all(t is not None for t in tokens)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    types = [3 if t in SPECIALS else 1 for t in tokens]
    return tokens, merges, types


def train_spm(vocab_size, workdir):
    import sentencepiece as spm

    corpus = os.path.join(workdir, "spm_corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        for line in CORPUS:
            for part in line.split("\n"):
                if part.strip():
                    f.write(part + "\n")
    prefix = os.path.join(workdir, "spm")
    spm.SentencePieceTrainer.train(
        input=corpus,
        model_prefix=prefix,
        vocab_size=vocab_size,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        split_digits=True,
        bos_id=1,
        eos_id=2,
        unk_id=0,
        pad_id=-1,
        add_dummy_prefix=True,
        remove_extra_whitespaces=False,
        normalization_rule_name="identity",
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        tokens.append(sp.id_to_piece(i))
        scores.append(float(sp.get_score(i)))
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_byte(i):
            types.append(6)
        elif sp.is_unused(i):
            types.append(5)
        else:
            types.append(1)
    return tokens, scores, types


def render_chat(template, system, user, bos, eos):
    """Renders like transformers' apply_chat_template (trim_blocks, lstrip_blocks, sandbox)."""

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def strftime_now(fmt):
        return FIXED_NOW.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda x, indent=None, ensure_ascii=False: json.dumps(x, indent=indent, ensure_ascii=ensure_ascii)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return env.from_string(template).render(
        messages=messages, add_generation_prompt=True, bos_token=bos, eos_token=eos
    )


def rng_for(name):
    return np.random.default_rng(sum(map(ord, name)) * 7919)


def random_kquant_bytes(qtype, n_rows, n_cols, scale, rng):
    """Random but valid K-quant blocks (the gguf package has no K-quant quantizer)."""
    block_bytes = {QT.Q4_K: 144, QT.Q5_K: 176, QT.Q6_K: 210}[qtype]
    n_blocks = n_rows * n_cols // 256
    raw = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
    if qtype in (QT.Q4_K, QT.Q5_K):
        d = (scale / 250.0 * rng.uniform(0.5, 1.5, n_blocks)).astype(np.float16)
        dmin = (scale / 40.0 * rng.uniform(0.5, 1.5, n_blocks)).astype(np.float16)
        raw[:, 0:2] = d.view(np.uint8).reshape(n_blocks, 2)
        raw[:, 2:4] = dmin.view(np.uint8).reshape(n_blocks, 2)
    else:
        d = (scale / 1000.0 * rng.uniform(0.5, 1.5, n_blocks)).astype(np.float16)
        raw[:, 208:210] = d.view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(n_rows, n_cols // 256 * block_bytes)


def encode_tensor(arr, qtype, rng, scale):
    """Returns (data to write, raw_dtype, dequantized f32 twin)."""
    if qtype == QT.F32:
        return arr.astype(np.float32), None, arr.astype(np.float32)
    if qtype == QT.F16:
        h = arr.astype(np.float16)
        return h, None, h.astype(np.float32)
    if qtype in (QT.Q4_K, QT.Q5_K, QT.Q6_K):
        raw = random_kquant_bytes(qtype, arr.shape[0], arr.shape[1], scale, rng)
        return raw, qtype, gguf.quants.dequantize(raw, qtype).astype(np.float32)
    q = gguf.quants.quantize(arr.astype(np.float32), qtype)
    return q, qtype, gguf.quants.dequantize(q, qtype).astype(np.float32)


class Spec:
    def __init__(self, name, arch, pre, tokenizer, template, default_qtype, qtypes=None, tied=False,
                 rope_freqs=False, rope_base=10000.0, qkv_bias=False, add_bos=None, rope_linear=None,
                 llama_quantize=None, n_layer=None, head_dim=None, sliding_window=None):
        self.name = name
        self.arch = arch
        self.pre = pre
        self.tokenizer = tokenizer
        self.template = template
        self.default_qtype = default_qtype
        self.qtypes = qtypes or {}
        self.tied = tied
        self.rope_freqs = rope_freqs
        self.rope_base = rope_base
        self.qkv_bias = qkv_bias
        self.add_bos = add_bos
        self.rope_linear = rope_linear
        # A llama.cpp ftype: the F32 model is written, then quantized by llama.cpp itself.
        self.llama_quantize = llama_quantize
        # Gemma 3 shapes: more layers (every 6th is global), a head size other than D / N_HEAD,
        # and a small sliding window so the test prompts cross it.
        self.n_layer = n_layer or N_LAYER
        self.head_dim = head_dim or HD
        self.sliding_window = sliding_window

    @property
    def quantized(self):
        if self.llama_quantize:
            return True
        all_types = {self.default_qtype, *self.qtypes.values()}
        return bool(all_types - {QT.F32})


D, N_LAYER, N_HEAD, N_KV, FF = 64, 2, 4, 2, 256
HD = D // N_HEAD

SPECS = [
    Spec("llama-f32", "llama", "llama-bpe", "bpe", "llama3.jinja", QT.F32, rope_freqs=True, rope_base=500000.0),
    Spec("qwen2-f16", "qwen2", "qwen2", "bpe", "qwen2.jinja", QT.F16, tied=True, qkv_bias=True, rope_base=1000000.0),
    Spec("smollm-q8_0", "llama", "smollm", "bpe", "smollm2.jinja", QT.Q8_0, tied=True, rope_base=100000.0,
         rope_linear=4.0),
    Spec("qwen2-qmix", "qwen2", "qwen2", "bpe", "qwen2.jinja", QT.Q8_0, qkv_bias=True, rope_base=1000000.0,
         qtypes={"token_embd": QT.Q4_0, "attn_q": QT.Q4_0, "attn_k": QT.Q4_1, "attn_v": QT.Q5_0,
                 "attn_output": QT.Q5_1, "ffn_gate": QT.Q8_0, "ffn_up": QT.Q5_0,
                 "ffn_down.0": QT.Q4_K, "ffn_down.1": QT.Q5_K, "output": QT.Q8_0}),
    Spec("llama-bf16-q6k", "llama", "gpt-2", "bpe", "llama3.jinja", QT.BF16,
         qtypes={"ffn_down": QT.Q6_K}),
    Spec("llama-spm", "llama", None, "spm", "mistral.jinja", QT.F16),
    # "Q4_K_M" as llama.cpp's quantizer writes it for rows that are not multiples of 256.
    Spec("llama-q4km-llamacpp", "llama", "llama-bpe", "bpe", "llama3.jinja", QT.F32, llama_quantize=15),
    # Gemma 3 (GeGLU, sqrt(d) embedding scale, q/k norms, post-norms, local/global layers).
    Spec("gemma3-f32", "gemma3", None, "spm", "mistral.jinja", QT.F32, tied=True, rope_base=1000000.0,
         n_layer=7, head_dim=32, sliding_window=8),
]
VOCAB_ONLY = [("vocab-default", "default"), ("vocab-gpt2", "gpt-2")]


def write_gguf(path, spec, vocab, weights, twin):
    """weights: name -> (data, raw_dtype); writes an F32 twin too when twin is a path."""
    tokens, merges, types, scores = vocab
    for out_path, use_twin in ((path, False), (twin, True)):
        if out_path is None:
            continue
        w = gguf.GGUFWriter(out_path, spec.arch)
        w.add_name(spec.name + ("-f32-twin" if use_twin else ""))
        w.add_context_length(1024)
        w.add_embedding_length(D)
        w.add_block_count(spec.n_layer)
        w.add_feed_forward_length(FF)
        w.add_head_count(N_HEAD)
        w.add_head_count_kv(N_KV)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_rope_freq_base(spec.rope_base)
        w.add_rope_dimension_count(spec.head_dim)
        if spec.arch == "gemma3":
            w.add_key_length(spec.head_dim)
            w.add_value_length(spec.head_dim)
            w.add_sliding_window(spec.sliding_window)
        if spec.rope_linear:
            w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(spec.rope_linear)
        w.add_file_type(0 if use_twin else 1)
        if spec.tokenizer == "bpe":
            w.add_tokenizer_model("gpt2")
            w.add_tokenizer_pre(spec.pre)
            w.add_token_list(tokens)
            w.add_token_types(types)
            w.add_token_merges(merges)
            if spec.template.startswith("llama3"):
                w.add_bos_token_id(tokens.index("<|begin_of_text|>"))
                w.add_eos_token_id(tokens.index("<|eot_id|>"))
            else:
                w.add_bos_token_id(tokens.index("<|im_start|>"))
                w.add_eos_token_id(tokens.index("<|im_end|>"))
            if spec.add_bos is not None:
                w.add_add_bos_token(spec.add_bos)
            elif spec.pre != "llama-bpe":
                w.add_add_bos_token(False)
        else:
            w.add_tokenizer_model("llama")
            w.add_token_list(tokens)
            w.add_token_scores(scores)
            w.add_token_types(types)
            w.add_bos_token_id(1)
            w.add_eos_token_id(2)
            w.add_unk_token_id(0)
            w.add_add_bos_token(True)
            w.add_add_eos_token(False)
        with open(os.path.join(HERE, "templates", spec.template), encoding="utf-8") as f:
            w.add_chat_template(f.read())
        for name, (data, raw_dtype, deq, shape) in weights.items():
            if use_twin:
                w.add_tensor(name, deq.reshape(shape).astype(np.float32))
            elif raw_dtype is None:
                w.add_tensor(name, data)
            else:
                w.add_tensor(name, data, raw_dtype=raw_dtype)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()


def llama_cpp_quantize(spec, vocab, weights, path, twin, tmp):
    """Writes the F32 model, quantizes it with llama.cpp's own quantizer into `path`, and writes
    the dequantized F32 twin of what llama.cpp produced."""
    import ctypes
    import llama_cpp

    f32 = os.path.join(tmp, spec.name + "-source-f32.gguf")
    write_gguf(f32, spec, vocab, weights, None)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = spec.llama_quantize
    params.nthread = 2
    if llama_cpp.llama_model_quantize(f32.encode(), path.encode(), ctypes.byref(params)) != 0:
        raise RuntimeError("llama_model_quantize failed")
    deq = {}
    for t in gguf.GGUFReader(path).tensors:
        shape = tuple(int(d) for d in reversed(t.shape))
        arr = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32).reshape(shape)
        deq[t.name] = (arr, None, arr, shape)
    write_gguf(twin, spec, vocab, deq, None)
    return deq


def make_weights(spec, n_vocab):
    rng = rng_for(spec.name)
    weights = {}

    def qtype_for(kind, layer=None):
        if layer is not None and f"{kind}.{layer}" in spec.qtypes:
            return spec.qtypes[f"{kind}.{layer}"]
        return spec.qtypes.get(kind, spec.default_qtype)

    def add(name, arr, kind, layer=None, scale=1.0):
        qt = qtype_for(kind, layer) if arr.ndim == 2 else QT.F32
        data, raw, deq = encode_tensor(arr, qt, rng, scale)
        weights[name] = (data, raw, deq, arr.shape)

    add("token_embd.weight", rng.normal(0, 1, (n_vocab, D)).astype(np.float32), "token_embd")
    hd = spec.head_dim
    for i in range(spec.n_layer):
        p = f"blk.{i}."
        add(p + "attn_norm.weight", (1 + 0.1 * rng.normal(size=D)).astype(np.float32), "norm")
        add(p + "attn_q.weight", rng.normal(0, D ** -0.5, (N_HEAD * hd, D)).astype(np.float32), "attn_q", i, D ** -0.5)
        add(p + "attn_k.weight", rng.normal(0, D ** -0.5, (N_KV * hd, D)).astype(np.float32), "attn_k", i, D ** -0.5)
        add(p + "attn_v.weight", rng.normal(0, D ** -0.5, (N_KV * hd, D)).astype(np.float32), "attn_v", i, D ** -0.5)
        if spec.qkv_bias:
            add(p + "attn_q.bias", (0.1 * rng.normal(size=N_HEAD * HD)).astype(np.float32), "bias")
            add(p + "attn_k.bias", (0.1 * rng.normal(size=N_KV * HD)).astype(np.float32), "bias")
            add(p + "attn_v.bias", (0.1 * rng.normal(size=N_KV * HD)).astype(np.float32), "bias")
        add(p + "attn_output.weight", rng.normal(0, D ** -0.5, (D, N_HEAD * hd)).astype(np.float32), "attn_output", i, D ** -0.5)
        add(p + "ffn_norm.weight", (1 + 0.1 * rng.normal(size=D)).astype(np.float32), "norm")
        add(p + "ffn_gate.weight", rng.normal(0, D ** -0.5, (FF, D)).astype(np.float32), "ffn_gate", i, D ** -0.5)
        add(p + "ffn_up.weight", rng.normal(0, D ** -0.5, (FF, D)).astype(np.float32), "ffn_up", i, D ** -0.5)
        add(p + "ffn_down.weight", rng.normal(0, FF ** -0.5, (D, FF)).astype(np.float32), "ffn_down", i, FF ** -0.5)
        if spec.arch == "gemma3":
            add(p + "attn_q_norm.weight", (1 + 0.1 * rng.normal(size=hd)).astype(np.float32), "norm")
            add(p + "attn_k_norm.weight", (1 + 0.1 * rng.normal(size=hd)).astype(np.float32), "norm")
            add(p + "post_attention_norm.weight", (1 + 0.1 * rng.normal(size=D)).astype(np.float32), "norm")
            add(p + "post_ffw_norm.weight", (1 + 0.1 * rng.normal(size=D)).astype(np.float32), "norm")
    add("output_norm.weight", (1 + 0.1 * rng.normal(size=D)).astype(np.float32), "norm")
    if not spec.tied:
        add("output.weight", rng.normal(0, 4 * D ** -0.5, (n_vocab, D)).astype(np.float32), "output")
    if spec.rope_freqs:
        # Llama-3 rope scaling as convert_hf_to_gguf.py stores it: per-dimension-pair divisors.
        factor, low, high, old_ctx = 8.0, 1.0, 4.0, 8192
        freqs = 1.0 / (spec.rope_base ** (np.arange(0, HD, 2, dtype=np.float32) / HD))
        low_wl, high_wl = old_ctx / low, old_ctx / high
        out = []
        for f in freqs:
            wl = 2 * np.pi / f
            if wl < high_wl:
                out.append(1.0)
            elif wl > low_wl:
                out.append(factor)
            else:
                smooth = (old_ctx / wl - low) / (high - low)
                out.append(1 / ((1 - smooth) / factor + smooth))
        # Tiny models see short contexts; compress the range so several pairs get a factor != 1.
        out = np.array(out, dtype=np.float32)
        out[: len(out) // 2] = 1.0
        out[len(out) // 2:] = np.linspace(1.5, 8.0, len(out) - len(out) // 2)
        weights["rope_freqs.weight"] = (out, None, out, out.shape)
    return weights


def _no_extra_buffers():
    """llama.cpp's repacked/AMX "extra buffer" CPU kernels segfault on these d=64 models (seen on an
    AVX512+AMX host with llama-cpp-python 0.3.36); the plain CPU kernels are the reference anyway."""
    import llama_cpp
    import llama_cpp.llama as llama_module

    if getattr(llama_cpp, "_ragscope_patched", False):
        return
    original = llama_cpp.llama_model_default_params

    def params():
        p = original()
        p.use_extra_bufts = False
        return p

    llama_cpp.llama_model_default_params = params
    llama_module.llama_cpp.llama_model_default_params = params
    llama_cpp._ragscope_patched = True


def llama(path, vocab_only=False):
    _no_extra_buffers()
    from llama_cpp import Llama

    kwargs = dict(model_path=path, n_ctx=1024, n_batch=1024, n_ubatch=1024, n_threads=2,
                  logits_all=True, type_k=0, type_v=0, verbose=False, seed=0, vocab_only=vocab_only)
    try:
        return Llama(flash_attn=False, **kwargs)
    except TypeError:
        return Llama(**kwargs)


def last_logits(llm, ids):
    llm.reset()
    llm.eval(ids)
    return np.array(llm.scores[len(ids) - 1], dtype=np.float64)


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def tokenize_cases(llm):
    cases = []
    for s in HARD_STRINGS:
        for add_special, parse_special in ((False, True), (True, False), (False, False)):
            ids = llm.tokenize(s.encode("utf-8"), add_bos=add_special, special=parse_special)
            cases.append({"text": s, "add_special": add_special, "parse_special": parse_special, "ids": ids})
    return cases


def model_fixture(spec, vocab, out_dir, tmp):
    tokens = vocab[0]
    weights = make_weights(spec, len(tokens))
    path = os.path.join(out_dir, spec.name + ".gguf")
    twin = os.path.join(tmp, spec.name + "-f32.gguf") if spec.quantized else None
    if spec.llama_quantize:
        weights = llama_cpp_quantize(spec, vocab, weights, path, twin, tmp)
    else:
        write_gguf(path, spec, vocab, weights, twin)

    llm = llama(path)
    assert llm.n_vocab() == len(tokens)
    bos = tokens[llm.token_bos()] if llm.token_bos() >= 0 else ""
    eos = tokens[llm.token_eos()] if llm.token_eos() >= 0 else ""
    with open(os.path.join(HERE, "templates", spec.template), encoding="utf-8") as f:
        template = f.read()
    nr_ids = llm.tokenize("NO-RESPONSE".encode(), add_bos=False, special=False)
    nr = nr_ids[0]

    chats, prompts = [], []
    for q, text in QA:
        user = USER_TEMPLATE.format(text=text, question=q)
        rendered = render_chat(template, SYSTEM_PROMPT, user, bos, eos)
        ids = llm.tokenize(rendered.encode("utf-8"), add_bos=False, special=True)
        chats.append({"system": SYSTEM_PROMPT, "user": user, "rendered": rendered, "ids": ids})
        prompts.append(ids)
    # Raw prompts of other lengths (BOS where the model adds one), including a 1-token prompt.
    for s in ("Hello world", "NO-RESPONSE", "x"):
        prompts.append(llm.tokenize(s.encode(), add_bos=True, special=False))

    ref = llama(twin) if twin else llm
    logits = []
    for ids in prompts:
        lg = last_logits(ref, ids)
        entry = {"ids": ids, "last_logits": [float(np.float32(v)) for v in lg],
                 "p_no_response": float(softmax(lg)[nr])}
        if twin:
            lq = last_logits(llm, ids)
            entry["quantized_p_no_response"] = float(softmax(lq)[nr])
            entry["quantized_max_abs_logit_diff"] = float(np.abs(lq - lg).max())
        logits.append(entry)

    weight_types = sorted({QT(raw).name if raw is not None else ("F16" if data.dtype == np.float16 else "F32")
                           for data, raw, _, shape in weights.values() if len(shape) == 2})
    if spec.llama_quantize:
        weight_types = sorted({t.tensor_type.name for t in gguf.GGUFReader(path).tensors if len(t.shape) == 2})
    anchor = None
    if spec.name == ANCHOR_MODEL:
        # p(NO-RESPONSE) for every passage of the UDCG anchor data, for the CLI's tests.
        with open(ANCHOR_DATA, encoding="utf-8") as f:
            examples = json.load(f)
        anchor = []
        for ex in examples:
            for p in ex["passages"]:
                user = USER_TEMPLATE.format(text=p["text"], question=ex["question"])
                ids = llm.tokenize(render_chat(template, SYSTEM_PROMPT, user, bos, eos).encode("utf-8"), add_bos=False, special=True)
                anchor.append({"example_id": ex["example_id"], "doc_id": p["doc_id"],
                               "p_no_response": float(softmax(last_logits(ref, ids))[nr])})
    fixture = {
        "model_file": spec.name + ".gguf",
        "weight_types": weight_types,
        "udcg_anchor": anchor,
        "general_name": spec.name,
        "arch": spec.arch,
        "pre": spec.pre,
        "tokenizer": spec.tokenizer,
        "reference": "llama.cpp on the dequantized F32 twin" if twin else "llama.cpp on this file",
        "no_response_ids": nr_ids,
        "bos": bos,
        "eos": eos,
        "tokenize": tokenize_cases(llm),
        "chat": chats,
        "logits": logits,
    }
    with open(os.path.join(out_dir, spec.name + ".json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False)
    summary = {"model": spec.name, "file_bytes": os.path.getsize(path), "reference": fixture["reference"],
               "weight_types": weight_types}
    if twin:
        rel = [abs(e["quantized_p_no_response"] - e["p_no_response"]) / e["p_no_response"] for e in logits]
        summary["llama_cpp_quantized_vs_twin_max_rel_p"] = max(rel)
        summary["llama_cpp_quantized_vs_twin_max_abs_logit"] = max(e["quantized_max_abs_logit_diff"] for e in logits)
    return summary


def vocab_only_fixture(name, pre, vocab, out_dir):
    tokens, merges, types, _ = vocab
    path = os.path.join(out_dir, name + ".gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_name(name)
    w.add_context_length(1024)
    w.add_embedding_length(D)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(tokens.index("<|endoftext|>"))
    w.add_eos_token_id(tokens.index("<|endoftext|>"))
    w.add_add_bos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    llm = llama(path, vocab_only=True)
    fixture = {"model_file": name + ".gguf", "pre": pre, "tokenizer": "bpe", "tokenize": tokenize_cases(llm)}
    with open(os.path.join(out_dir, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False)
    return {"model": name, "file_bytes": os.path.getsize(path), "reference": "llama.cpp vocab_only"}


def dequant_fixture(out_dir):
    rng = np.random.default_rng(20261120)
    cases = []
    for qt in (QT.F16, QT.BF16, QT.Q4_0, QT.Q4_1, QT.Q5_0, QT.Q5_1, QT.Q8_0):
        for dist in ("normal", "uniform", "heavy", "zeros", "const"):
            n = 64
            x = {"normal": lambda: rng.normal(0, 1, n), "uniform": lambda: rng.uniform(-3, 3, n),
                 "heavy": lambda: rng.standard_t(1.5, n), "zeros": lambda: np.zeros(n),
                 "const": lambda: np.full(n, 0.75)}[dist]().astype(np.float32).reshape(1, n)
            q = gguf.quants.quantize(x, qt)
            raw = np.ascontiguousarray(q).view(np.uint8).reshape(-1)
            deq = gguf.quants.dequantize(q, qt).astype(np.float32).reshape(-1)
            cases.append({"type": qt.name, "type_id": int(qt), "source": dist, "n": n,
                          "bytes_b64": base64.b64encode(raw.tobytes()).decode(),
                          "values": [float(v) for v in deq]})
    for qt in (QT.Q4_K, QT.Q5_K, QT.Q6_K):
        for k in range(4):
            raw = random_kquant_bytes(qt, 1, 512, [1.0, 0.01, 30.0, 1.0][k], rng)
            deq = gguf.quants.dequantize(raw, qt).astype(np.float32).reshape(-1)
            cases.append({"type": qt.name, "type_id": int(qt), "source": f"random-bytes-{k}", "n": 512,
                          "bytes_b64": base64.b64encode(raw.tobytes()).decode(),
                          "values": [float(v) for v in deq]})
    with open(os.path.join(out_dir, "dequant.json"), "w") as f:
        json.dump({"generator": "gguf " + getattr(gguf, "__version__", "?"), "cases": cases}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import llama_cpp

    dequant_fixture(args.out)
    tokens, merges, types = train_bpe(600)
    bpe = (tokens, merges, types, None)
    summary = {"llama_cpp_python": llama_cpp.__version__, "models": []}
    with tempfile.TemporaryDirectory() as tmp:
        spm_tokens, spm_scores, spm_types = train_spm(400, tmp)
        spm_vocab = (spm_tokens, None, spm_types, spm_scores)
        for spec in SPECS:
            summary["models"].append(model_fixture(spec, spm_vocab if spec.tokenizer == "spm" else bpe, args.out, tmp))
            print(json.dumps(summary["models"][-1]), file=sys.stderr)
        for name, pre in VOCAB_ONLY:
            summary["models"].append(vocab_only_fixture(name, pre, bpe, args.out))
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
