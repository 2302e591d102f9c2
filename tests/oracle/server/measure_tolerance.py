"""Where `judge utility` (llama-cpp-python's server, SmolLM2-135M Q4_1) and `ragscope utility`
(the local engine) differ, and why: p(NO-RESPONSE) for every passage of the UDCG sample computed
in-process by llama.cpp on the Q4_1 file and on its F32 twin (dequantized weights), printed
next to the two ragscope outputs.

Usage: python measure_tolerance.py Q4_1.gguf F32_TWIN.gguf sample_dataset.json LOCAL.json REMOTE.json MODEL_NAME
(LOCAL/REMOTE: `ragscope utility` / `ragscope judge utility` outputs in JSON mode.)
Run with the oracle venv (tests/oracle/.venv: llama-cpp-python 0.3.36)."""
import json
import math
import sys

from llama_cpp import Llama

SYSTEM = ("You are given a question and you must respond based on the provided documents. Respond "
          "directly without providing any premise or explanation. If none of the documents contain "
          "the answer, please respond with NO-RESPONSE. Do not try to respond based on your own "
          "knowledge.")


def chatml(question, text):
    user = f"Document: {text}\nQuestion: {question}\nAnswer:"
    return (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            f"<|im_start|>assistant\n")


def logp(llm, prompt, target):
    toks = llm.tokenize(prompt.encode(), add_bos=False, special=True)
    llm.reset()
    llm.eval(toks)
    row = llm.scores[len(toks) - 1]
    m = max(row)
    lse = m + math.log(sum(math.exp(x - m) for x in row))
    return row[target] - lse


def main():
    q4, twin, data, local, remote, name = sys.argv[1:7]
    kw = dict(logits_all=True, type_k=0, type_v=0, n_ctx=2048, verbose=False, n_threads=1)
    a, b = Llama(q4, **kw), Llama(twin, **kw)
    target = a.tokenize(b"NO-RESPONSE", add_bos=False, special=False)[0]
    loc, rem = json.load(open(local)), json.load(open(remote))
    worst = {"server-q4": 0.0, "local-twin": 0.0, "server-local": 0.0}
    print("ln p: llama.cpp Q4_1 | server | llama.cpp F32 twin | ragscope local")
    for ei, ex in enumerate(json.load(open(data))):
        for pi, p in enumerate(ex["passages"]):
            prompt = chatml(ex["question"], p["text"])
            x, y = logp(a, prompt, target), logp(b, prompt, target)
            s = math.log(rem[ei]["passages"][pi]["models_info"][name]["no_res_prob"])
            l = math.log(loc[ei]["passages"][pi]["models_info"][name]["no_res_prob"])
            worst["server-q4"] = max(worst["server-q4"], abs(s - x))
            worst["local-twin"] = max(worst["local-twin"], abs(l - y))
            worst["server-local"] = max(worst["server-local"], abs(s - l))
            print(f"{x:.5f} {s:.5f} {y:.5f} {l:.5f}")
    print("max |difference of ln p|:", {k: round(v, 6) for k, v in worst.items()})


main()
