//! The worker's answer files: nuggetizer assignments and nuggets, TREC 2024 RAG answers, Open
//! RAG Eval CSVs, citation-support judgments and pointwise grades, read with crates/eval's
//! parsers; and the Answers view's report (nugget scores in every mode with paired significance
//! over topics, the nugget matrix, the drill-down, citation scores per run and topic, mean
//! pointwise grades per agent).

use std::collections::{BTreeSet, HashMap};

use ragscope_eval::answers::citation_judgments;
use ragscope_eval::answers::citations::RunCitations;
use ragscope_eval::answers::nugget_scores::{self, Compat, SCORE_NAMES};
use ragscope_eval::answers::nuggetizer::{
    self, AssignedRun, Assignment, TopicNuggets as NuggetList,
};
use ragscope_eval::answers::open_rag_eval::{self, OreAnswer};
use ragscope_eval::answers::pointwise_grades::{self, AgentGrades};
use ragscope_eval::answers::trec_rag::{self, RagAnswer};

use ragscope_protocol::answer_files::{
    AgentGradeRow, AnswerDetail, AnswerFile, AnswersMode, AnswersReport, CitationRun, TopicNuggets,
    CELL_ABSENT, CELL_FAILED, CELL_NOT, CELL_PARTIAL, CELL_SUPPORT,
};
use ragscope_protocol::{FileId, RunRow, SigTest};

enum Content {
    Assigned(Vec<AssignedRun>),
    Nuggets(Vec<NuggetList>),
    Rag(Vec<RagAnswer>),
    Ore(Vec<OreAnswer>),
    /// Scored with crates/eval's citation kernel, as `ragscope citations` scores the file.
    Citations(Vec<RunCitations>),
    Grades(Vec<AgentGrades>),
}

/// A sentence (or Open RAG Eval answer part) and the references it cites.
type Sentence = (String, Vec<String>);

#[derive(Default)]
pub struct AnswerFiles {
    files: Vec<(FileId, String, Content)>,
}

impl AnswerFiles {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Parses a whole answer file; the summary names what it holds.
    pub fn keep(
        &mut self,
        id: FileId,
        name: &str,
        kind: AnswerFile,
        bytes: &[u8],
    ) -> Result<String, String> {
        let err = |e: ragscope_eval::rag::InputError| e.to_string();
        let (content, summary) = match kind {
            AnswerFile::Assignments => {
                let answers = nuggetizer::parse_assignments(name, bytes).map_err(err)?;
                let n = answers.len();
                let runs = nuggetizer::group_runs(name, nuggetizer::file_stem(name), answers)
                    .map_err(err)?;
                let ids: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
                let summary = format!("{n} assigned answers, run {}", ids.join(", "));
                (Content::Assigned(runs), summary)
            }
            AnswerFile::Nuggets => {
                let topics = nuggetizer::parse_nuggets(name, bytes).map_err(err)?;
                let n: usize = topics.iter().map(|t| t.nuggets.len()).sum();
                let summary = format!("{} topics, {n} nuggets", topics.len());
                (Content::Nuggets(topics), summary)
            }
            AnswerFile::RagAnswers => {
                let answers = trec_rag::parse(name, bytes).map_err(err)?;
                let summary = format!("{} answers (TREC RAG)", answers.len());
                (Content::Rag(answers), summary)
            }
            AnswerFile::OpenRagEvalAnswers => {
                let answers = open_rag_eval::read_answers(name, bytes).map_err(err)?;
                let summary = format!("{} answers (Open RAG Eval)", answers.len());
                (Content::Ore(answers), summary)
            }
            AnswerFile::OpenRagEvalResults => {
                let scored = open_rag_eval::read_results(name, bytes).map_err(err)?;
                let stem = nuggetizer::file_stem(name);
                let runs = open_rag_eval::assigned_runs(name, stem, &scored).map_err(err)?;
                let summary = format!(
                    "{} scored answers (Open RAG Eval), {} with nugget judgments",
                    scored.len(),
                    runs.iter().map(|r| r.answers.len()).sum::<usize>()
                );
                (Content::Assigned(runs), summary)
            }
            AnswerFile::CitationJudgments => {
                let judgments = citation_judgments::parse(name, bytes).map_err(err)?;
                let runs = citation_judgments::score_runs(&judgments);
                let summary = format!(
                    "{} citation judgments, run {}",
                    judgments.len(),
                    runs.iter()
                        .map(|r| r.run_id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                (Content::Citations(runs), summary)
            }
            AnswerFile::PointwiseGrades => {
                let text = String::from_utf8_lossy(bytes);
                let grades = pointwise_grades::parse(name, &text).map_err(err)?;
                let agents = pointwise_grades::by_agent(&grades);
                let failed = grades.iter().filter(|g| g.grade.is_none()).count();
                let summary = format!(
                    "{} pointwise grades ({failed} failed), {} agents",
                    grades.len(),
                    agents.len()
                );
                (Content::Grades(agents), summary)
            }
        };
        // In the order files were added (ids), as the UI lists them, whatever finished first.
        let at = self.files.partition_point(|(f, _, _)| *f < id);
        self.files.insert(at, (id, name.to_string(), content));
        Ok(summary)
    }

    pub fn remove(&mut self, id: FileId) {
        self.files.retain(|(f, _, _)| *f != id);
    }

    fn runs(&self) -> Vec<(FileId, &AssignedRun)> {
        self.files
            .iter()
            .flat_map(|(id, _, c)| match c {
                Content::Assigned(runs) => runs.iter().map(|r| (*id, r)).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// The Answers view's data; `None` when no answer file is loaded.
    pub fn report(&self, baseline: Option<FileId>, test: SigTest) -> Option<AnswersReport> {
        if self.files.is_empty() {
            return None;
        }
        let runs = self.runs();
        let mut notes = Vec::new();
        let (citations, grades) = self.judged();
        if runs.is_empty() && citations.is_empty() && grades.is_empty() {
            notes.push(
                "Load nuggetizer assignment files (or Open RAG Eval results) to score answers; \
                 answers and nuggets alone show in the drill-down."
                    .to_string(),
            );
        }
        let topics: Vec<String> = runs
            .iter()
            .flat_map(|(_, r)| r.answers.iter().map(|a| a.qid.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let index: HashMap<&str, usize> = topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i))
            .collect();
        let base = baseline
            .and_then(|b| runs.iter().position(|(id, _)| *id == b))
            .unwrap_or(0);
        let modes = [
            (Compat::Paper, "paper"),
            (Compat::Nuggetizer, "nuggetizer"),
            (Compat::OpenRagEval, "open-rag-eval"),
        ]
        .into_iter()
        .map(|(compat, label)| {
            let scored: Vec<_> = runs
                .iter()
                .map(|(id, r)| (*id, nugget_scores::score_run(r, compat)))
                .collect();
            let mut rows: Vec<RunRow> = scored
                .iter()
                .map(|(id, s)| {
                    let mut per_query = vec![vec![f64::NAN; topics.len()]; SCORE_NAMES.len()];
                    for t in &s.topics {
                        for (m, v) in t.scores.values().into_iter().enumerate() {
                            per_query[m][index[t.qid.as_str()]] = v;
                        }
                    }
                    RunRow {
                        id: *id,
                        name: s.run_id.clone(),
                        num_queries: s.topics.len(),
                        means: s.mean.values().to_vec(),
                        per_query,
                        significance: vec![None; SCORE_NAMES.len()],
                    }
                })
                .collect();
            super::add_significance(&mut rows, base, test);
            AnswersMode {
                compat: label.to_string(),
                failed: scored.iter().map(|(_, s)| s.failed).collect(),
                runs: rows,
                baseline: base,
            }
        })
        .collect();
        Some(AnswersReport {
            scores: SCORE_NAMES.iter().map(|s| s.to_string()).collect(),
            matrix: self.matrix(&runs, &topics),
            answers: self.details(&runs),
            topics,
            modes,
            notes,
            citations,
            grades,
        })
    }

    /// Citation scores and pointwise grades of the loaded judgment files, in file order.
    fn judged(&self) -> (Vec<CitationRun>, Vec<AgentGradeRow>) {
        let (mut citations, mut grades) = (Vec::new(), Vec::new());
        for (_, name, content) in &self.files {
            match content {
                Content::Citations(runs) => citations.extend(runs.iter().map(|r| {
                    CitationRun {
                        run: r.run_id.clone(),
                        file: name.clone(),
                        precision: r.mean.precision,
                        recall: r.mean.recall,
                        f1: r.mean.f1,
                        scored: r.scored,
                        topics: r
                            .answers
                            .iter()
                            .filter_map(|a| {
                                a.scores
                                    .map(|s| (a.qid.clone(), s.precision, s.recall, s.f1))
                            })
                            .collect(),
                    }
                })),
                Content::Grades(agents) => grades.extend(agents.iter().map(|a| AgentGradeRow {
                    agent: a.agent.clone(),
                    file: name.clone(),
                    mean: a.mean,
                    graded: a.graded,
                    failed: a.failed,
                    queries: a.per_query.clone(),
                })),
                _ => {}
            }
        }
        (citations, grades)
    }

    fn matrix(&self, runs: &[(FileId, &AssignedRun)], topics: &[String]) -> Vec<TopicNuggets> {
        let names: Vec<String> = runs.iter().map(|(_, r)| r.run_id.clone()).collect();
        topics
            .iter()
            .map(|qid| {
                let mut nuggets: Vec<(String, String)> = Vec::new();
                let mut query = String::new();
                // A loaded nuggets file gives the topic's nugget list first (its order).
                for (_, _, content) in &self.files {
                    if let Content::Nuggets(list) = content {
                        for t in list.iter().filter(|t| &t.qid == qid) {
                            query.clone_from(&t.query);
                            for n in &t.nuggets {
                                if !nuggets.iter().any(|(x, _)| *x == n.text) {
                                    nuggets
                                        .push((n.text.clone(), n.importance.label().to_string()));
                                }
                            }
                        }
                    }
                }
                for (_, r) in runs {
                    if let Some(a) = r.answers.iter().find(|a| &a.qid == qid) {
                        if query.is_empty() {
                            query = a.query.clone();
                        }
                        for n in &a.nuggets {
                            if !nuggets.iter().any(|(t, _)| *t == n.text) {
                                nuggets.push((n.text.clone(), n.importance.label().to_string()));
                            }
                        }
                    }
                }
                // Vital first, otherwise in the order the files list them (stable).
                nuggets.sort_by_key(|(_, imp)| imp != "vital");
                let cells = nuggets
                    .iter()
                    .map(|(text, _)| {
                        runs.iter()
                            .map(|(_, r)| {
                                let a = r.answers.iter().find(|a| &a.qid == qid);
                                let n = a.and_then(|a| a.nuggets.iter().find(|n| &n.text == text));
                                match n.map(|n| &n.assignment) {
                                    None => CELL_ABSENT,
                                    Some(Assignment::Support) => CELL_SUPPORT,
                                    Some(Assignment::PartialSupport) => CELL_PARTIAL,
                                    Some(Assignment::NotSupport) => CELL_NOT,
                                    Some(_) => CELL_FAILED,
                                }
                            })
                            .collect()
                    })
                    .collect();
                TopicNuggets {
                    qid: qid.clone(),
                    query,
                    nuggets,
                    runs: names.clone(),
                    cells,
                }
            })
            .collect()
    }

    fn details(&self, runs: &[(FileId, &AssignedRun)]) -> Vec<AnswerDetail> {
        // Sentences and citations from TREC RAG / Open RAG Eval answer files, by (run, topic).
        let mut sentences: HashMap<(String, String), Vec<Sentence>> = HashMap::new();
        let mut unassigned = Vec::new();
        for (_, name, content) in &self.files {
            match content {
                Content::Rag(answers) => {
                    for a in answers {
                        let s = a
                            .answer
                            .iter()
                            .map(|s| {
                                let cited = if a.references.is_empty() {
                                    s.citations.iter().map(|c| format!("[{c}]")).collect()
                                } else {
                                    a.cited(s).iter().map(|r| r.to_string()).collect()
                                };
                                (s.text.clone(), cited)
                            })
                            .collect();
                        sentences.insert((a.run_id.clone(), a.topic_id.clone()), s);
                        unassigned.push((a.run_id.clone(), a.topic_id.clone(), a.text()));
                    }
                }
                Content::Ore(answers) => {
                    let stem = nuggetizer::file_stem(name);
                    for a in answers {
                        let run = format!("{stem}#run_{}", a.query_run);
                        let s = a
                            .parts
                            .iter()
                            .map(|p| (p.text.clone(), p.citations.clone()))
                            .collect();
                        sentences.insert((run.clone(), a.query_id.clone()), s);
                        unassigned.push((run, a.query_id.clone(), a.answer.clone()));
                    }
                }
                Content::Nuggets(_)
                | Content::Assigned(_)
                | Content::Citations(_)
                | Content::Grades(_) => {}
            }
        }
        let mut out: Vec<AnswerDetail> = Vec::new();
        for (_, r) in runs {
            for a in &r.answers {
                let mut nuggets: Vec<(String, String, String)> = a
                    .nuggets
                    .iter()
                    .map(|n| {
                        (
                            n.text.clone(),
                            n.importance.label().to_string(),
                            n.assignment.label().to_string(),
                        )
                    })
                    .collect();
                nuggets.sort_by_key(|(_, imp, _)| imp != "vital");
                out.push(AnswerDetail {
                    run: r.run_id.clone(),
                    qid: a.qid.clone(),
                    text: a.answer_text.clone(),
                    sentences: sentences
                        .remove(&(r.run_id.clone(), a.qid.clone()))
                        .unwrap_or_default(),
                    nuggets,
                });
            }
        }
        // Answers without nugget judgments still show with their citations.
        for (run, qid, text) in unassigned {
            if let Some(s) = sentences.remove(&(run.clone(), qid.clone())) {
                out.push(AnswerDetail {
                    run,
                    qid,
                    text,
                    sentences: s,
                    nuggets: Vec::new(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::Workspace;
    use ragscope_protocol::answer_files::{AnswerFile, CELL_ABSENT};
    use ragscope_protocol::{EvalRequest, FileKind, Request, Response, SigTest};

    fn fixture(name: &str) -> Vec<u8> {
        let root = concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
            "/crates/eval/tests/fixtures/answers/"
        );
        std::fs::read(format!("{root}{name}")).unwrap()
    }

    fn shared(path: &str) -> Vec<u8> {
        let root = concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
            "/../shared/data/"
        );
        std::fs::read(format!("{root}{path}")).unwrap()
    }

    fn load(ws: &mut Workspace, id: u32, name: &str, bytes: &[u8]) -> Response {
        ws.handle(Request::LoadStart {
            id,
            name: name.into(),
            size: bytes.len() as u64,
        });
        for chunk in bytes.chunks(5000) {
            ws.handle(Request::LoadChunk {
                id,
                bytes: chunk.to_vec(),
            });
        }
        ws.handle(Request::LoadEnd { id }).remove(0)
    }

    #[test]
    fn answer_files_load_and_score_like_the_oracle() {
        let mut ws = Workspace::default();
        let files: Vec<(&str, Vec<u8>, AnswerFile)> = vec![
            (
                "run-alpha.jsonl",
                fixture("run-alpha.jsonl"),
                AnswerFile::Assignments,
            ),
            (
                "run-beta.jsonl",
                fixture("run-beta.jsonl"),
                AnswerFile::Assignments,
            ),
            (
                "nuggets.jsonl",
                shared("nuggetizer/nuggets.jsonl"),
                AnswerFile::Nuggets,
            ),
            (
                "readme.json",
                shared("nuggetizer/readme_trec2024_rag_answer_example.json"),
                AnswerFile::RagAnswers,
            ),
            (
                "ore_results.csv",
                fixture("ore_results.csv"),
                AnswerFile::OpenRagEvalResults,
            ),
            (
                "test_csv_connector.csv",
                shared("open-rag-eval/test_csv_connector.csv"),
                AnswerFile::OpenRagEvalAnswers,
            ),
        ];
        for (i, (name, bytes, kind)) in files.iter().enumerate() {
            match load(&mut ws, i as u32 + 1, name, bytes) {
                Response::Loaded { kind: k, .. } => assert_eq!(k, FileKind::Answers(*kind)),
                other => panic!("{name}: {other:?}"),
            }
        }
        // A broken file fails alone, with its place.
        match load(
            &mut ws,
            99,
            "bad.jsonl",
            b"{\"qid\":\"1\",\"nuggets\":[{\"text\":\"a\",\"assignment\":3}]}\n",
        ) {
            Response::LoadFailed { error, .. } => {
                assert!(error.contains("bad.jsonl:1:"), "{error}")
            }
            other => panic!("{other:?}"),
        }
        let out = ws.handle(Request::Evaluate(EvalRequest {
            measures: vec!["MAP".into()],
            baseline: None,
            test: SigTest::PairedT,
            generation: 1,
        }));
        let Some(Response::Report(report)) = out.last() else {
            panic!("{out:?}")
        };
        let a = report.answers.as_ref().expect("answers report");
        assert_eq!(a.scores[0], "V_strict");
        let expected: serde_json::Value =
            serde_json::from_slice(&fixture("expected.json")).unwrap();
        for (m, mode) in a.modes.iter().enumerate() {
            let want = &expected["modes"][&mode.compat][0]["mean"];
            let alpha = &mode.runs[0];
            assert_eq!(alpha.name, "run-alpha");
            for (i, name) in a.scores.iter().enumerate() {
                assert_eq!(alpha.means[i], want[name].as_f64().unwrap(), "{m} {name}");
            }
            // The second run is tested against the first, paired over topics.
            assert!(mode.runs[1].significance[0].is_some());
            assert_eq!(mode.runs.len(), 4, "alpha, beta, ore_results#run_1, #run_2");
        }
        // Matrix rows vital first; cells for runs without the topic are absent.
        for t in &a.matrix {
            let first_okay = t.nuggets.iter().position(|(_, i)| i != "vital");
            if let Some(k) = first_okay {
                assert!(
                    t.nuggets[k..].iter().all(|(_, i)| i != "vital"),
                    "{}",
                    t.qid
                );
            }
        }
        let t = a.matrix.iter().find(|t| t.qid == "query_1").unwrap();
        assert!(t.cells.iter().all(|row| row[0] == CELL_ABSENT));
        // The TREC RAG answer shows with its cited references.
        let rag = a.answers.iter().find(|d| d.run == "ragnarok").unwrap();
        assert_eq!(rag.sentences.len(), 10);
        assert_eq!(
            rag.sentences[0].1[0],
            "msmarco_v2.1_doc_51_766815931#2_1606878413"
        );
        assert!(a
            .answers
            .iter()
            .any(|d| d.run == "test_csv_connector#run_2"));
        // Removing the files removes the view's data.
        for id in 1..=6 {
            ws.handle(Request::Remove { id });
        }
        let out = ws.handle(Request::Evaluate(EvalRequest {
            measures: vec!["MAP".into()],
            baseline: None,
            test: SigTest::PairedT,
            generation: 2,
        }));
        let Some(Response::Report(report)) = out.last() else {
            panic!()
        };
        assert!(report.answers.is_none());
    }
}
