"""Oracle for eRAG's downstream metrics (crates/eval/src/rag/rouge_l.rs and answer_match.rs):

* ROUGE-L F1 from the PyPI `rouge-score` package itself (`RougeScorer(["rougeL"])`, no stemming),
  candidate = the answer's first line, best over the gold answers;
* the lost-in-the-middle normalisation and `best_subspan_em` exactly as the paper's repository
  writes them (nelson-liu/lost-in-the-middle, src/lost_in_the_middle/metrics.py: SQuAD's
  `normalize_answer` with the `regex` package, whose `\\b` and `\\w` follow Unicode), on strings
  chosen to hit the corners: Unicode punctuation and spaces, combining marks, ASCII separator
  controls, articles glued to punctuation, digits.

    python tests/oracle/rouge/generate.py --out crates/eval/tests/fixtures/rag
"""

import argparse
import json
import os
import string

import regex
from rouge_score import rouge_scorer


# The lost-in-the-middle functions, as in the paper's repository (metrics.py).
def normalize_answer(s):
    def remove_articles(text):
        return regex.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def best_subspan_em(prediction, ground_truths):
    normalized_prediction = normalize_answer(prediction)
    for ground_truth in ground_truths:
        normalized_ground_truth = normalize_answer(ground_truth)
        if normalized_ground_truth.lower() in normalized_prediction.lower():
            return 1.0
    return 0.0


def exact_match(prediction, ground_truths):
    p = normalize_answer(prediction)
    return float(any(normalize_answer(g) == p for g in ground_truths))


SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l(prediction, ground_truths):
    # rouge_score's signature is score(target, prediction).
    return max([SCORER.score(g, prediction)["rougeL"].fmeasure for g in ground_truths] + [0.0])


CASES = [
    ("Paris", ["Paris"]),
    ("The capital is Paris.", ["paris"]),
    ("It's the city of Paris, France", ["Paris, France"]),
    ("an apple a day", ["The Apple"]),
    ("the cat sat on the mat", ["a cat sat", "mat on the cat"]),
    ("Abraham Lincoln\nGeorge Washington", ["George Washington"]),
    ("384,400 km", ["384400 km", "384,400 kilometres"]),
    ("NO-RESPONSE", ["no response"]),
    ("Caf\u00e9 M\u00fcnchen", ["CAF\u00c9 m\u00fcnchen", "caf m nchen"]),
    ("\u00c9cole Normale Sup\u00e9rieure", ["ecole normale"]),
    # A combining accent after "the": a word character for `regex`, not for Python's `re`.
    ("the\u0301 answer", ["answer"]),
    ("an\u0308 apple", ["an\u0308 apple"]),
    # Unicode punctuation is not in string.punctuation and stays.
    ("\u201cThe Beatles\u201d \u2014 the band", ["beatles"]),
    ("It\u2019s the end", ["its end", "it\u2019s end"]),
    ("\u00bfQu\u00e9? \u00a1S\u00ed!", ["qu\u00e9 s\u00ed"]),
    # Separators: no-break space, ideographic space, ASCII unit/record separators, NEL.
    ("New\u00a0York", ["new york"]),
    ("\u6771\u4eac\u3000\u65e5\u672c", ["\u65e5\u672c"]),
    ("the\x1fbest\x1cone", ["best one"]),
    ("alpha\x85beta", ["alpha beta"]),
    ("tab\tseparated \r\n answer", ["separated"]),
    # Articles glued to punctuation, underscores, digits.
    ("the-end of a.b", ["end of b"]),
    ("the_an a_the", ["athe"]),
    ("A1 an2 the3", ["a1 an2 the3"]),
    ("THE THE the", ["x"]),
    ("Anne of the Island", ["Anne of Island"]),
    ("mr. smith's dog", ["Mr Smiths dog"]),
    ("1969-07-20", ["July 20, 1969", "1969"]),
    ("He was born in the year 1809 in Kentucky", ["1809", "Kentucky, U.S."]),
    ("\u0130stanbul", ["i\u0307stanbul"]),
    ("\u212a-pop", ["k pop"]),
    ("stra\u00dfe", ["strasse"]),
    ("\u0391\u03b8\u03ae\u03bd\u03b1", ["\u03b1\u03b8\u03ae\u03bd\u03b1"]),
    ("x y z", ["z y x"]),
    ("", ["x"]),
    ("!!!", ["x"]),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    cases = []
    for answer, golds in CASES:
        line = answer.split("\n")[0]
        cases.append({
            "answer": answer,
            "golds": golds,
            "normalized": normalize_answer(line),
            "normalized_golds": [normalize_answer(g) for g in golds],
            "substring": best_subspan_em(line, golds),
            "exact_match": exact_match(line, golds),
            "rouge_l": rouge_l(line, golds),
        })
    with open(os.path.join(args.out, "erag_metrics.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tests/oracle/rouge/generate.py",
                   "packages": "rouge-score 0.1.2, regex 2025.11.3 (tests/oracle/rouge/requirements.txt)",
                   "cases": cases}, f, ensure_ascii=True, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
