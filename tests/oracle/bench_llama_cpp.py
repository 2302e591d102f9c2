#!/usr/bin/env python3
"""Prefill throughput of llama.cpp (llama-cpp-python) on a real GGUF model (`--model`, e.g.
SmolLM2-135M-Instruct Q4_1 from `cargo xtask models`) with the paper's prompt and ~400-token
passages, or on a random-weight model with SmolLM2-135M's shapes in Q8_0; compare with
crates/infer's `prefill_bench` example on the prompts.json written here.

    python tests/oracle/bench_llama_cpp.py --out /tmp/infer-bench --threads 2 --prompts 8 --tokens 256
    cargo run --release -p ragscope-infer --example prefill_bench -- \
        --model /tmp/infer-bench/smollm2-135m-shape-q8_0.gguf --threads 2 --prompts-file /tmp/infer-bench/prompts.json

Writes the model (about 145 MB, not committed) and prompts.json (random token ids, seeded), then
prints one JSON line with llama.cpp's tokens/s (each prompt evaluated from an empty cache,
last-position logits only, as a prefill-only scorer needs).
"""

import argparse
import json
import os
import time

import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

# SmolLM2-135M (HuggingFaceTB/SmolLM2-135M config.json).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

D, N_LAYER, N_HEAD, N_KV, FF, VOCAB = 576, 30, 9, 3, 1536, 49152
HD = D // N_HEAD


def write_model(path):
    rng = np.random.default_rng(135)
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("smollm2-135m-shape-random-q8_0")
    w.add_context_length(8192)
    w.add_embedding_length(D)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(100000.0)
    w.add_file_type(7)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    tokens = [chr(c) for c in range(33, 127)] + [f"t{i}" for i in range(VOCAB - 94)]
    w.add_token_list(tokens)
    w.add_token_types([1] * VOCAB)
    w.add_token_merges(["t 0"])
    w.add_bos_token_id(0)
    w.add_eos_token_id(0)
    w.add_add_bos_token(False)

    def q8(name, rows, cols, std):
        w.add_tensor(name, gguf.quants.quantize(rng.normal(0, std, (rows, cols)).astype(np.float32), QT.Q8_0), raw_dtype=QT.Q8_0)

    def f32(name, n):
        w.add_tensor(name, (1 + 0.1 * rng.normal(size=n)).astype(np.float32))

    q8("token_embd.weight", VOCAB, D, 1.0)
    for i in range(N_LAYER):
        p = f"blk.{i}."
        f32(p + "attn_norm.weight", D)
        q8(p + "attn_q.weight", N_HEAD * HD, D, D ** -0.5)
        q8(p + "attn_k.weight", N_KV * HD, D, D ** -0.5)
        q8(p + "attn_v.weight", N_KV * HD, D, D ** -0.5)
        q8(p + "attn_output.weight", D, N_HEAD * HD, D ** -0.5)
        f32(p + "ffn_norm.weight", D)
        q8(p + "ffn_gate.weight", FF, D, D ** -0.5)
        q8(p + "ffn_up.weight", FF, D, D ** -0.5)
        q8(p + "ffn_down.weight", D, FF, FF ** -0.5)
    f32("output_norm.weight", D)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def real_prompts(path, n):
    """The paper's prompt through the model's own chat template with ~400-token passages (three
    consecutive NQ contexts of ../shared/data/litm), tokenized by llama.cpp: what UDCG scores."""
    import generate
    import gguf

    field = gguf.GGUFReader(path).fields.get("tokenizer.chat_template")
    template = field.contents()
    from llama_cpp import Llama

    # Not generate.llama(): that one disables the repacked kernels for the whole process.
    vocab = Llama(model_path=path, vocab_only=True, verbose=False)
    bos = vocab.detokenize([vocab.token_bos()], special=True).decode() if vocab.token_bos() >= 0 else ""
    eos = vocab.detokenize([vocab.token_eos()], special=True).decode() if vocab.token_eos() >= 0 else ""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data", "litm",
                        "nq20_subset.jsonl")
    prompts = []
    with open(data, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            text = "\n\n".join(c["title"] + "\n" + c["text"] for c in r["ctxs"][:3])
            user = generate.USER_TEMPLATE.format(text=text, question=r["question"])
            rendered = generate.render_chat(template, generate.SYSTEM_PROMPT, user, bos, eos)
            prompts.append(vocab.tokenize(rendered.encode("utf-8"), add_bos=False, special=True))
            if len(prompts) == n:
                break
    return prompts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--decode", type=int, default=0,
                    help="instead: time N greedy decoding steps after each prompt (one sequence at a time)")
    ap.add_argument("--model", help="a real GGUF model: real prompts (~400-token passages) instead of random ids")
    ap.add_argument("--no-repack", action="store_true",
                    help="disable llama.cpp's repacked CPU kernels (they crash on the tiny random models here)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import generate

    if args.model:
        path = args.model
        prompts = real_prompts(path, args.prompts)
    else:
        path = os.path.join(args.out, "smollm2-135m-shape-q8_0.gguf")
        if not os.path.exists(path):
            write_model(path)
        rng = np.random.default_rng(7)
        prompts = [[int(t) for t in rng.integers(0, VOCAB, args.tokens)] for _ in range(args.prompts)]
    with open(os.path.join(args.out, "prompts.json"), "w") as f:
        json.dump(prompts, f)

    if args.no_repack or not args.model:
        generate._no_extra_buffers()
    from llama_cpp import Llama

    n_ctx = max(len(p) for p in prompts) + args.decode + 8
    llm = Llama(model_path=path, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, type_k=0, type_v=0,
                n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
    llm.reset()
    llm.eval(prompts[0][:16])  # warm-up
    if args.decode:
        # Greedy steps: arg-max of the last logits fed back, timed apart from the prefill.
        secs, steps = 0.0, 0
        for p in prompts:
            llm.reset()
            llm.eval(p)
            start = time.perf_counter()
            for _ in range(args.decode):
                tok = int(np.argmax(llm.scores[llm.n_tokens - 1]))
                llm.eval([tok])
                steps += 1
            secs += time.perf_counter() - start
        print(json.dumps({"engine": "llama.cpp (llama-cpp-python)", "model": path, "threads": args.threads,
                          "prompts": len(prompts), "prompt_tokens": args.tokens, "decode_steps": steps,
                          "seconds": round(secs, 3), "decode_tokens_per_s": round(steps / secs, 1)}))
        return
    start = time.perf_counter()
    for p in prompts:
        llm.reset()
        llm.eval(p)
    secs = time.perf_counter() - start
    total = sum(len(p) for p in prompts)
    print(json.dumps({"engine": "llama.cpp (llama-cpp-python)", "model": path, "threads": args.threads,
                      "prompts": len(prompts), "tokens": total, "seconds": round(secs, 3),
                      "tokens_per_s": round(total / secs, 1)}))


if __name__ == "__main__":
    main()
