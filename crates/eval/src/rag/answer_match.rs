//! Scoring a generated answer against gold answers, and the end-to-end outcome of a context.
//!
//! * Normalised substring match ("best_subspan_em"; Liu et al., "Lost in the Middle", TACL 2024,
//!   nelson-liu/lost-in-the-middle `metrics.py`, after SQuAD's `normalize_answer`, with the
//!   `regex` package's Unicode `\b` and Python's `str.split()`; checked against that code by
//!   tests/oracle/rouge/generate.py):
//!   cut the answer at its first newline; lowercase; delete ASCII punctuation; replace the words
//!   `a`, `an`, `the` by a space; collapse whitespace. Correct ⇔ some normalised gold answer is a
//!   substring of the normalised answer. An empty normalised gold matches nothing here (the
//!   reference would match every answer with it; a blank gold is a data error, not a free pass).
//! * Exact match: the normalised answer equals a normalised gold (SQuAD EM).
//! * ROUGE-L F1 of the first line, best over the gold answers (kernel and formula in
//!   [`super::rouge_l`]).
//! * Outcome (Trappolini et al. 2025, §7.2): abstain when the normalised answer contains
//!   "noresponse" (the prompt's NO-RESPONSE with its hyphen deleted); else correct when the
//!   context holds a relevant passage and the answer matches; else wrong. A context without a
//!   relevant passage is never counted correct (the paper's rule).

use super::contexts::Outcome;

/// Python's `string.punctuation`.
fn is_ascii_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
}

/// A word character as the `\w` of the Python `regex` package the lost-in-the-middle scorer
/// uses (`import regex`): Unicode's definition (UTS #18), so a combining mark continues a word
/// ("the\u{301}" is not the article).
fn is_word(c: char) -> bool {
    regex_syntax::is_word_character(c)
}

/// Python's `str.split()` separators: Unicode White_Space plus the ASCII file, group, record
/// and unit separators (U+001C..U+001F), which Python also splits on.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The first line of a generated answer (the lost-in-the-middle scorer cuts there).
pub fn first_line(answer: &str) -> &str {
    answer.split('\n').next().unwrap_or("")
}

/// SQuAD / lost-in-the-middle `normalize_answer`.
pub fn normalize_answer(s: &str) -> String {
    let lowered: String = s
        .to_lowercase()
        .chars()
        .filter(|&c| !is_ascii_punctuation(c))
        .collect();
    // Replace whole words a/an/the by a space (the `\b(a|an|the)\b` substitution).
    let mut no_articles = String::with_capacity(lowered.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if matches!(word.as_str(), "a" | "an" | "the") {
            out.push(' ');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in lowered.chars() {
        if is_word(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut no_articles);
            no_articles.push(c);
        }
    }
    flush(&mut word, &mut no_articles);
    no_articles
        .split(is_python_space)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// best_subspan_em: 1 when some normalised gold is a substring of the normalised first line.
pub fn substring_match(answer: &str, golds: &[String]) -> bool {
    let a = normalize_answer(first_line(answer));
    golds.iter().any(|g| {
        let g = normalize_answer(g);
        !g.is_empty() && a.contains(&g)
    })
}

/// SQuAD exact match on the first line.
pub fn exact_match(answer: &str, golds: &[String]) -> bool {
    let a = normalize_answer(first_line(answer));
    golds.iter().any(|g| normalize_answer(g) == a)
}

/// ROUGE-L F1 of the first line against the best gold answer (0 without tokens); the kernel is
/// [`super::rouge_l::rouge_l_f1`].
pub fn rouge_l(answer: &str, golds: &[String]) -> f64 {
    let a = first_line(answer);
    golds
        .iter()
        .map(|g| super::rouge_l::rouge_l_f1(a, g))
        .fold(0.0, f64::max)
}

/// Whether the answer abstains (contains NO-RESPONSE, normalised).
pub fn abstains(answer: &str) -> bool {
    normalize_answer(first_line(answer)).contains("noresponse")
}

/// The end-to-end outcome of an answer generated from a context.
pub fn outcome(answer: &str, golds: &[String], context_has_relevant: bool) -> Outcome {
    if abstains(answer) {
        Outcome::Abstain
    } else if context_has_relevant && substring_match(answer, golds) {
        Outcome::Correct
    } else {
        Outcome::Wrong
    }
}

/// The downstream metric eRAG scores each passage with (Salemi & Zamani 2024).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DownstreamMetric {
    /// Normalised substring match (lost in the middle), 0 or 1.
    Substring,
    /// SQuAD exact match, 0 or 1.
    ExactMatch,
    /// ROUGE-L F1 in [0, 1] (the UDCG paper's baseline).
    RougeL,
}

impl DownstreamMetric {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "substring" | "subspan_em" => Some(Self::Substring),
            "em" | "exact_match" => Some(Self::ExactMatch),
            "rouge_l" | "rouge-l" | "rougeL" => Some(Self::RougeL),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Substring => "substring",
            Self::ExactMatch => "em",
            Self::RougeL => "rouge_l",
        }
    }

    /// eRAG's per-passage score: this metric of the answer generated from the passage alone.
    pub fn score(self, answer: &str, golds: &[String]) -> f64 {
        match self {
            Self::Substring => f64::from(u8::from(substring_match(answer, golds))),
            Self::ExactMatch => f64::from(u8::from(exact_match(answer, golds))),
            Self::RougeL => rouge_l(answer, golds),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn never_correct_without_a_relevant_passage() {
        assert_eq!(outcome("Paris", &g(&["Paris"]), false), Outcome::Wrong);
        assert_eq!(outcome("Paris", &g(&["Paris"]), true), Outcome::Correct);
        assert_eq!(
            outcome("NO-RESPONSE", &g(&["Paris"]), true),
            Outcome::Abstain
        );
        assert_eq!(outcome("x\nParis", &g(&["Paris"]), true), Outcome::Wrong);
    }

    #[test]
    fn blank_gold_matches_nothing() {
        assert!(!substring_match("anything", &g(&["  ", "the"])));
    }
}
