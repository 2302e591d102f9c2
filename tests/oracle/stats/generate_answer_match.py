"""Oracle for crates/eval/src/rag/answer_match.rs: the lost-in-the-middle answer scorer
(nelson-liu/lost-in-the-middle, `best_subspan_em` over SQuAD's `normalize_answer`, the answer cut at
its first newline), SQuAD exact match, and ROUGE-L F1 with the `rouge_score` package's default
tokenizer (lowercase, runs of characters other than [a-z0-9] split tokens, no stemming) — written
here from those definitions in plain Python for a set of hard cases.

    python tests/oracle/stats/generate_answer_match.py --out crates/eval/tests/fixtures/rag
"""

import argparse
import json
import os
import re
import string


def normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def first_line(prediction):
    return prediction.split("\n")[0]


def best_subspan_em(prediction, ground_truths):
    p = normalize_answer(first_line(prediction))
    # One deliberate departure, documented in answer_match.rs: an empty normalised gold matches nothing.
    return float(any(normalize_answer(g) and normalize_answer(g) in p for g in ground_truths))


def exact_match(prediction, ground_truths):
    p = normalize_answer(first_line(prediction))
    return float(any(normalize_answer(g) == p for g in ground_truths))


def rouge_tokens(text):
    return [t for t in re.split(r"\s+", re.sub(r"[^a-z0-9]+", " ", text.lower())) if t]


def lcs(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def rouge_l(prediction, ground_truths):
    p = rouge_tokens(first_line(prediction))
    best = 0.0
    for g in ground_truths:
        t = rouge_tokens(g)
        n = lcs(p, t)
        if n == 0:
            continue
        prec, rec = n / len(p), n / len(t)
        best = max(best, 2 * prec * rec / (prec + rec))
    return best


CASES = [
    ("Paris", ["Paris"]),
    ("The capital is Paris.", ["paris"]),
    ("It's the city of Paris, France", ["Paris, France"]),
    ("an apple a day", ["The Apple"]),
    ("Theater", ["the"]),
    ("the", ["the"]),
    ("Abraham Lincoln\nGeorge Washington", ["George Washington"]),
    ("  Lincoln  ", ["Abraham Lincoln", "Lincoln"]),
    ("384,400 km", ["384400 km"]),
    ("384,400 km", ["384,400 kilometres"]),
    ("NO-RESPONSE", ["no response"]),
    ("Caf\u00e9 M\u00fcnchen", ["CAF\u00c9 m\u00fcnchen"]),
    ("\u00c9cole Normale", ["ecole normale"]),
    ("A.B.C. corp", ["abc corp"]),
    ("the_an a_the", ["an"]),
    ("Anne of the Island", ["Anne of Island"]),
    ("\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd", ["\u6771\u4eac"]),
    ("tab\tseparated   answer", ["separated answer"]),
    ("", ["x"]),
    ("something", [""]),
    ("1969-07-20", ["July 20, 1969", "1969"]),
    ("He was born in the year 1809 in Kentucky", ["1809", "Kentucky, U.S."]),
    ("mr. smith's dog", ["Mr Smiths dog"]),
    ("the the the", ["a"]),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    cases = [{"answer": a, "golds": g, "normalized": normalize_answer(first_line(a)),
              "substring": best_subspan_em(a, g), "exact_match": exact_match(a, g), "rouge_l": rouge_l(a, g)}
             for a, g in CASES]
    with open(os.path.join(args.out, "answer_match.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tests/oracle/stats/generate_answer_match.py", "cases": cases}, f,
                  ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
