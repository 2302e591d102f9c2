//! Telling file formats apart by their content (names lie: `run.txt`, `qrels`, `data.json`).

use ragscope_eval::answers::open_rag_eval;
use ragscope_protocol::answer_files::AnswerFile;
use ragscope_protocol::FileKind;

/// Bytes looked at before deciding; a slice of a big file is always at least this long.
pub const DETECT_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    Known(FileKind),
    /// A format people use that the app recognises but cannot read yet.
    Unsupported(&'static str),
    Unknown,
}

pub fn detect_kind(bytes: &[u8]) -> Detected {
    let head = &bytes[..bytes.len().min(DETECT_BYTES)];
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    match text.chars().next() {
        None => Detected::Unknown,
        Some('[') => detect_json_array(text),
        Some('{') => detect_json_lines(text),
        Some(_) => detect_columns(text),
    }
}

fn detect_json_array(text: &str) -> Detected {
    if text.contains("\"passages\"") {
        Detected::Known(FileKind::UdcgJson)
    } else {
        detect_json_lines(text)
    }
}

/// JSON Lines: recognised by the keys of the first record.
fn detect_json_lines(text: &str) -> Detected {
    let mut first = text.lines().next().unwrap_or("");
    if first.trim() == "{" {
        // One pretty-printed record (the TREC 2024 RAG README example): look at all of it.
        first = text;
    }
    let has = |key: &str| first.contains(&format!("\"{key}\""));
    if has("support") && has("sentence") && has("docid") {
        Detected::Known(FileKind::Answers(AnswerFile::CitationJudgments))
    } else if has("agent_a") && has("agent_b") && (has("relevant") || has("winner")) {
        Detected::Known(FileKind::RageloGames)
    } else if has("contexts") {
        Detected::Known(FileKind::ContextSets)
    } else if has("nuggets") && has("assignment") {
        Detected::Known(FileKind::Answers(AnswerFile::Assignments))
    } else if has("docno") && has("text") && text.starts_with('{') {
        // `{"docno","text"}` lines: the passages `ragscope utility` and the judges read.
        Detected::Known(FileKind::Passages)
    } else if has("nuggets") {
        Detected::Known(FileKind::Answers(AnswerFile::Nuggets))
    } else if has("answer") && (has("topic_id") || has("run_id") || has("references")) {
        Detected::Known(FileKind::Answers(AnswerFile::RagAnswers))
    } else if has("candidates") && has("query") {
        Detected::Unsupported("a TREC RAG retrieval pool (JSON Lines)")
    } else {
        Detected::Unknown
    }
}

/// Whitespace columns (run, qrels, utilities) or RAGElo's CSV files.
fn detect_columns(text: &str) -> Detected {
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let Some(first) = lines.next() else {
        return Detected::Unknown;
    };
    if open_rag_eval::is_results_header(first) {
        return Detected::Known(FileKind::Answers(AnswerFile::OpenRagEvalResults));
    }
    if open_rag_eval::is_answers_header(first) {
        return Detected::Known(FileKind::Answers(AnswerFile::OpenRagEvalAnswers));
    }
    if ragscope_eval::answers::pointwise_grades::is_header(first) {
        return Detected::Known(FileKind::Answers(AnswerFile::PointwiseGrades));
    }
    let header: Vec<&str> = first.split(',').map(str::trim).collect();
    // RAGElo's files name their query column `qid` (Open RAG Eval's CSV says `query_id`).
    if header.contains(&"qid") {
        use ragscope_eval::answers::ragelo_csv::{kind_of, RageloKind};
        match kind_of(first) {
            Some(RageloKind::PairwiseEvaluations) => return Detected::Known(FileKind::RageloGames),
            Some(_) => return Detected::Known(FileKind::RageloTable),
            None => {}
        }
    }
    if header.len() >= 2 && header[0].ends_with("id") {
        let ragelo = [["qid", "query"], ["qid", "did"], ["qid", "agent"]];
        if ragelo.iter().any(|h| header[..2] == h[..]) || header.contains(&"answer") {
            return Detected::Unsupported("a RAGElo CSV file");
        }
    }
    if is_topics_tsv(text) {
        return Detected::Known(FileKind::Topics);
    }
    let fields: Vec<&str> = first.split_whitespace().collect();
    if fields.first() == Some(&"qid") {
        return if fields.len() <= 5 {
            Detected::Known(FileKind::Utilities)
        } else {
            Detected::Unknown
        };
    }
    match fields.len() {
        3 if fields[2].parse::<f64>().is_ok() => Detected::Known(FileKind::Utilities),
        5 if fields[3].parse::<f64>().is_ok() => Detected::Known(FileKind::Utilities),
        n if n >= 6 => Detected::Known(FileKind::Run),
        4 => {
            // qrels `qid iter docno rel` vs utilities `qid docno relevant p`: a utilities
            // file has a fractional 4th column or a boolean 3rd one somewhere.
            let utilities = std::iter::once(first).chain(lines.take(500)).any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() == 4
                    && (f[3].contains(['.', 'e', 'E'])
                        || matches!(f[2], "true" | "false" | "True" | "False"))
            });
            Detected::Known(if utilities {
                FileKind::Utilities
            } else {
                FileKind::Qrels
            })
        }
        _ => Detected::Unknown,
    }
}

/// `qid<TAB>question` lines (the topics `ragscope utility` and the judges read): exactly one tab
/// per line and a question that is not a number. Runs, qrels and utilities have 3+ columns.
fn is_topics_tsv(text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .take(200)
        .collect();
    // The last line of a head cut at DETECT_BYTES may be partial: judge by the complete ones.
    let complete = if lines.len() > 1 && text.len() >= DETECT_BYTES {
        &lines[..lines.len() - 1]
    } else {
        &lines[..]
    };
    !complete.is_empty()
        && complete.iter().all(|l| {
            let mut parts = l.split('\t');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(qid), Some(question), None) => {
                    !qid.trim().is_empty()
                        && !question.trim().is_empty()
                        && question.trim().parse::<f64>().is_err()
                }
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(path: &str) -> Vec<u8> {
        let root = concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
            "/../shared/data/"
        );
        std::fs::read(format!("{root}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn every_anchor_format_is_recognised() {
        use Detected::*;
        let cases = [
            ("trec_eval/qrels.test", Known(FileKind::Qrels)),
            ("trec_eval/qrels.test.with-comments", Known(FileKind::Qrels)),
            ("trec_eval/qrels.rel_level", Known(FileKind::Qrels)),
            ("trec_eval/results.test", Known(FileKind::Run)),
            ("trec_eval/results.comment.test", Known(FileKind::Run)),
            ("udcg/sample_dataset.json", Known(FileKind::UdcgJson)),
            ("udcg/dataset_with_scores.json", Known(FileKind::UdcgJson)),
            (
                "ragelo/tests_data/answers.csv",
                Known(FileKind::RageloTable),
            ),
            (
                "ragelo/tests_data/documents.csv",
                Known(FileKind::RageloTable),
            ),
            ("ragelo/notebooks/queries.csv", Known(FileKind::RageloTable)),
            (
                "ragelo/notebooks/documents.csv",
                Known(FileKind::RageloTable),
            ),
            ("ragelo/notebooks/answers.csv", Known(FileKind::RageloTable)),
            (
                "ragelo/notebooks/pairwise_answers_evaluations.csv",
                Known(FileKind::RageloGames),
            ),
            (
                "ragelo/tests_data/pairwise_answers_evaluations.csv",
                Known(FileKind::RageloGames),
            ),
            (
                "ragelo/tests_data/answers_eval.jsonl",
                Known(FileKind::RageloGames),
            ),
        ];
        for (path, want) in cases {
            assert_eq!(detect_kind(&shared(path)), want, "{path}");
        }
        let answers = [
            ("nuggetizer/nuggets.jsonl", AnswerFile::Nuggets),
            ("nuggetizer/demo-run.jsonl", AnswerFile::RagAnswers),
            ("nuggetizer/assignments.jsonl", AnswerFile::Assignments),
            (
                "nuggetizer/readme_trec2024_rag_answer_example.json",
                AnswerFile::RagAnswers,
            ),
            (
                "open-rag-eval/test_csv_connector.csv",
                AnswerFile::OpenRagEvalAnswers,
            ),
            (
                "open-rag-eval/csv_results.csv",
                AnswerFile::OpenRagEvalAnswers,
            ),
        ];
        for (path, want) in answers {
            assert_eq!(
                detect_kind(&shared(path)),
                Known(FileKind::Answers(want)),
                "{path}"
            );
        }
        // nuggetizer's candidate pool is the input of nugget creation, not a scored file.
        let pool = detect_kind(&shared("nuggetizer/pool.jsonl"));
        assert!(matches!(pool, Unsupported(_)), "pool.jsonl: {pool:?}");
    }

    #[test]
    fn utilities_are_told_from_qrels() {
        assert_eq!(
            detect_kind(b"q1 d1 1 0.25\nq1 d2 0 1\n"),
            Detected::Known(FileKind::Utilities)
        );
        assert_eq!(
            detect_kind(b"q1 d1 0.5\n"),
            Detected::Known(FileKind::Utilities)
        );
        assert_eq!(
            detect_kind(b"qid docno relevant no_res_prob\nq1 d1 1 0\n"),
            Detected::Known(FileKind::Utilities)
        );
        assert_eq!(
            detect_kind(b"q1 0 d1 1\nq1 0 d2 0\n"),
            Detected::Known(FileKind::Qrels)
        );
        assert_eq!(
            detect_kind(b"{\"qid\": \"q1\", \"contexts\": []}\n"),
            Detected::Known(FileKind::ContextSets)
        );
        assert_eq!(detect_kind(b"just some text\n"), Detected::Unknown);
        assert_eq!(
            detect_kind(b"q1\tWhat is Python used for?\n2\twho wrote hamlet\n"),
            Detected::Known(FileKind::Topics)
        );
        assert_eq!(
            detect_kind(b"{\"docno\": \"d1\", \"text\": \"Python is ...\"}\n"),
            Detected::Known(FileKind::Passages)
        );
        // Tab-separated runs and qrels keep their kinds; a number is not a question.
        assert_eq!(
            detect_kind(b"q1\tQ0\td1\t1\t2.5\ttag\n"),
            Detected::Known(FileKind::Run)
        );
        assert_eq!(
            detect_kind(b"q1\t0\td1\t1\n"),
            Detected::Known(FileKind::Qrels)
        );
        assert_ne!(detect_kind(b"q1\t0.5\n"), Detected::Known(FileKind::Topics));
        assert_eq!(detect_kind(b""), Detected::Unknown);
    }
}
