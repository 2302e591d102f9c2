//! App state as a reducer: every change is an [`Action`], so state transitions are testable.

use ragscope_protocol::{FileId, FileKind, Report, Response, SigTest, TopicView};
use std::rc::Rc;
use yew::Reducible;

#[derive(Clone, Debug, PartialEq)]
pub struct LoadedFile {
    pub id: FileId,
    pub name: String,
    pub status: FileStatus,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FileStatus {
    /// Slices are being read and parsed: `bytes` of `size` so far.
    Reading {
        bytes: u64,
        size: u64,
    },
    Loaded {
        kind: FileKind,
        summary: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ErrorNote {
    pub id: u32,
    pub message: String,
}

/// The views of the results, one tab each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Scores,
    PerQuery,
    Distribution,
    Topic,
    Rag,
    Answers,
    Tournament,
    Agreement,
}

impl Tab {
    pub const ALL: [Tab; 8] = [
        Tab::Scores,
        Tab::PerQuery,
        Tab::Distribution,
        Tab::Topic,
        Tab::Rag,
        Tab::Answers,
        Tab::Tournament,
        Tab::Agreement,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Tab::Scores => "Scores",
            Tab::PerQuery => "Per query",
            Tab::Distribution => "Distribution",
            Tab::Topic => "Topic drill-down",
            Tab::Rag => "RAG",
            Tab::Answers => "Answers",
            Tab::Tournament => "Tournament",
            Tab::Agreement => "Agreement",
        }
    }

    pub fn slug(self) -> &'static str {
        match self {
            Tab::Scores => "scores",
            Tab::PerQuery => "per-query",
            Tab::Distribution => "distribution",
            Tab::Topic => "topic",
            Tab::Rag => "rag",
            Tab::Answers => "answers",
            Tab::Tournament => "tournament",
            Tab::Agreement => "agreement",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Theme {
    /// Follows the system's light/dark setting.
    #[default]
    System,
    Light,
    Dark,
}

impl Theme {
    pub fn next(self) -> Theme {
        match self {
            Theme::System => Theme::Light,
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::System,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct AppState {
    pub files: Vec<LoadedFile>,
    pub measures: Vec<String>,
    pub baseline: Option<FileId>,
    pub test: SigTest,
    /// The evaluation being waited for, with its progress (queries done, total).
    pub awaiting: Option<(u32, usize, usize)>,
    pub report: Option<Rc<Report>>,
    /// A report the worker evaluated ahead of the next request (crates/worker/src/agent.rs), until
    /// then.
    pub ahead: Option<Rc<Report>>,
    pub errors: Vec<ErrorNote>,
    pub tab: Tab,
    pub theme: Theme,
    pub topic: Option<TopicView>,
    /// "Compute locally" (model, WebGPU, utilities being computed).
    pub compute: crate::ui::compute_state::ComputeState,
    next_error: u32,
}

impl AppState {
    pub fn new(measures: Vec<String>) -> Self {
        Self {
            measures,
            ..Self::default()
        }
    }

    fn has(&self, kind: FileKind) -> bool {
        self.files
            .iter()
            .any(|f| matches!(&f.status, FileStatus::Loaded { kind: k, .. } if *k == kind))
    }

    pub fn has_qrels(&self) -> bool {
        self.has(FileKind::Qrels)
    }

    pub fn has_run(&self) -> bool {
        self.has(FileKind::Run)
    }

    /// What an evaluation asked for now is of: the loaded files and the choices.
    pub fn evaluation_of(&self) -> ragscope_protocol::ReportOf {
        let mut files: Vec<FileId> = self
            .files
            .iter()
            .filter(|f| matches!(f.status, FileStatus::Loaded { .. }))
            .map(|f| f.id)
            .collect();
        files.sort_unstable();
        ragscope_protocol::ReportOf {
            files,
            measures: self.measures.clone(),
            baseline: self.baseline,
            test: self.test,
        }
    }

    /// Whether the report evaluated ahead (crates/worker/src/agent.rs) is of exactly the files and
    /// choices the page would ask for now: then the page takes it and sends no request (the worker
    /// would answer one after parsing the run whole, with the same report).
    pub fn ahead_fits(&self) -> bool {
        self.ahead
            .as_ref()
            .is_some_and(|a| a.ahead_of.as_ref() == Some(&self.evaluation_of()))
    }

    pub fn loading(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.status, FileStatus::Reading { .. }))
    }

    pub fn evaluating(&self) -> bool {
        self.awaiting.is_some()
    }

    /// Runs loaded, as (id, name), in load order.
    pub fn runs(&self) -> Vec<(FileId, String)> {
        self.files
            .iter()
            .filter(|f| {
                matches!(
                    f.status,
                    FileStatus::Loaded {
                        kind: FileKind::Run,
                        ..
                    }
                )
            })
            .map(|f| (f.id, f.name.clone()))
            .collect()
    }
}

/// Measures named in the page's query string (`?measures=nDCG@10,MAP`), so a view can be linked.
pub fn measures_from_query(search: &str) -> Option<Vec<String>> {
    let query = search.trim_start_matches('?');
    let value = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("measures="))?;
    let decoded = js_free_percent_decode(value);
    let list: Vec<String> = decoded
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect();
    (!list.is_empty()).then_some(list)
}

/// `%40` → `@` and friends, without a browser (only what measure names use).
fn js_free_percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() && s.is_char_boundary(i + 3) {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A file was picked, dropped or pasted; its slices are being read.
    FileAdded {
        id: FileId,
        name: String,
        size: u64,
    },
    /// Reading the file in the browser failed.
    FileReadFailed {
        id: FileId,
        error: String,
    },
    /// The user stopped a load, or removed a file.
    RemoveFile {
        id: FileId,
    },
    SetMeasures(Vec<String>),
    SetBaseline(Option<FileId>),
    SetTest(SigTest),
    EvaluationStarted {
        generation: u32,
    },
    CancelEvaluation,
    Worker(Response),
    DismissError {
        id: u32,
    },
    /// A problem outside loading and evaluating (e.g. storage), shown in the error panel.
    Notify(String),
    SetTab(Tab),
    CycleTheme,
    /// Forget every file and result.
    Clear,
    /// A GGUF file was picked for "compute locally" and is being opened in the worker.
    ComputeOpening(String),
    ComputeStarted,
    /// "Answer the contexts" was started (ui::answering_state).
    AnswersStarted,
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        // Nothing of this state (timings are kept by ui::perf_marks; judges and the
        // lost-in-the-middle page have reducers of their own): the same state, so no render of
        // the page, which every new state is (timings arrive right after a load's report).
        if matches!(
            action,
            Action::Worker(Response::Timings(_) | Response::Judge(_) | Response::Litm(_))
        ) {
            return self;
        }
        let mut s = (*self).clone();
        match action {
            Action::FileAdded { id, name, size } => s.files.push(LoadedFile {
                id,
                name,
                status: FileStatus::Reading { bytes: 0, size },
            }),
            Action::FileReadFailed { id, error } => {
                s.files.retain(|f| f.id != id);
                s.push_error(error);
            }
            Action::RemoveFile { id } => {
                s.files.retain(|f| f.id != id);
                if s.baseline == Some(id) {
                    s.baseline = None;
                }
                if !s.has_run() || (!s.has_qrels() && s.runs().is_empty()) {
                    s.report = None;
                }
            }
            Action::SetMeasures(m) => s.measures = m,
            Action::SetBaseline(b) => s.baseline = b,
            Action::SetTest(t) => s.test = t,
            Action::EvaluationStarted { generation } => {
                s.awaiting = Some((generation, 0, 0));
                // a report evaluated ahead of this request, of exactly what it asks for
                let fits = s.ahead_fits();
                if let Some(ahead) = s.ahead.take().filter(|_| fits) {
                    s.awaiting = None;
                    s.report = Some(ahead);
                }
            }
            Action::CancelEvaluation => s.awaiting = None,
            Action::Worker(Response::Progress { id, bytes }) => {
                if let Some(f) = s.files.iter_mut().find(|f| f.id == id) {
                    if let FileStatus::Reading { bytes: b, .. } = &mut f.status {
                        *b = bytes;
                    }
                }
            }
            Action::Worker(Response::Loaded {
                id, kind, summary, ..
            }) => {
                // A second utilities (contexts, topics, passages) file replaces the first, as in the worker; a new
                // qrels file is scored against, and the one before it stays as the other
                // judgment of the Agreement view (older ones go).
                if kind == FileKind::Qrels {
                    let is_qrels = |f: &LoadedFile| {
                        matches!(
                            &f.status,
                            FileStatus::Loaded {
                                kind: FileKind::Qrels,
                                ..
                            }
                        )
                    };
                    let keep = s
                        .files
                        .iter()
                        .rev()
                        .find(|f| f.id != id && is_qrels(f))
                        .map(|f| f.id);
                    s.files
                        .retain(|f| f.id == id || Some(f.id) == keep || !is_qrels(f));
                }
                if matches!(
                    kind,
                    FileKind::Utilities
                        | FileKind::ContextSets
                        | FileKind::Topics
                        | FileKind::Passages
                ) {
                    s.files.retain(|f| {
                        f.id == id
                            || !matches!(&f.status, FileStatus::Loaded { kind: k, .. } if *k == kind)
                    });
                }
                if let Some(f) = s.files.iter_mut().find(|f| f.id == id) {
                    f.status = FileStatus::Loaded { kind, summary };
                }
            }
            Action::Worker(Response::LoadFailed { id, error, .. }) => {
                s.files.retain(|f| f.id != id);
                s.push_error(error);
            }
            Action::Worker(Response::EvalProgress {
                generation,
                done,
                total,
            }) => {
                if matches!(s.awaiting, Some((g, _, _)) if g == generation) {
                    s.awaiting = Some((generation, done, total));
                }
            }
            Action::Worker(Response::Report(report)) => {
                // one evaluated ahead of the request (crates/worker/src/agent.rs) fits any awaited
                // one of the same files and choices
                let fits = match &report.ahead_of {
                    None => matches!(s.awaiting, Some((g, _, _)) if g == report.generation),
                    Some(of) => s.awaiting.is_some() && *of == s.evaluation_of(),
                };
                if !fits && report.ahead_of.is_some() {
                    // it comes before `Loaded`: kept for the request the page makes next
                    s.ahead = Some(Rc::new(*report));
                } else if fits {
                    s.awaiting = None;
                    s.report = Some(Rc::new(*report));
                }
            }
            Action::Worker(Response::EvalFailed { generation, error }) => {
                if matches!(s.awaiting, Some((g, _, _)) if g == generation) {
                    s.awaiting = None;
                    s.push_error(error);
                }
            }
            Action::Worker(Response::Topic(view)) => s.topic = Some(view),
            Action::Worker(Response::TopicFailed { error }) => {
                s.topic = None;
                s.push_error(error);
            }
            Action::Worker(Response::Compute(event)) => {
                if let Some(e) = crate::ui::compute_state::apply(&mut s, event) {
                    s.push_error(e);
                }
            }
            Action::ComputeOpening(name) => crate::ui::compute_state::opening(&mut s, name),
            Action::ComputeStarted => crate::ui::compute_state::started(&mut s),
            Action::AnswersStarted => crate::ui::answering_state::started(&mut s),
            // returned unchanged above
            Action::Worker(Response::Judge(_) | Response::Litm(_) | Response::Timings(_)) => {}
            Action::DismissError { id } => s.errors.retain(|e| e.id != id),
            Action::Notify(message) => s.push_error(message),
            Action::SetTab(t) => s.tab = t,
            Action::CycleTheme => s.theme = s.theme.next(),
            Action::Clear => {
                s = AppState {
                    measures: s.measures,
                    theme: s.theme,
                    test: s.test,
                    next_error: s.next_error,
                    ..AppState::default()
                }
            }
        }
        Rc::new(s)
    }
}

impl AppState {
    fn push_error(&mut self, message: String) {
        self.errors.push(ErrorNote {
            id: self.next_error,
            message,
        });
        self.next_error += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce(s: AppState, a: Action) -> AppState {
        (*Rc::new(s).reduce(a)).clone()
    }

    fn added(id: u32) -> Action {
        Action::FileAdded {
            id,
            name: format!("f{id}"),
            size: 10,
        }
    }

    fn loaded(id: u32, kind: FileKind) -> Action {
        Action::Worker(Response::Loaded {
            id,
            name: format!("f{id}"),
            kind,
            summary: String::new(),
        })
    }

    #[test]
    fn a_timing_is_no_new_state_so_no_render() {
        let s = Rc::new(AppState::new(vec!["MAP".into()]));
        let timing = Action::Worker(Response::Timings(ragscope_protocol::Timings {
            what: "load f0".into(),
            start_ms: 0.0,
            end_ms: 1.0,
            phases: vec![],
            wasm_memory_bytes: 0,
        }));
        assert!(Rc::ptr_eq(&s, &s.clone().reduce(timing)));
        // and a change is one
        assert!(!Rc::ptr_eq(&s, &s.clone().reduce(added(0))));
    }

    #[test]
    fn a_failed_load_keeps_what_was_loaded_and_reports_the_error() {
        let mut s = AppState::new(vec!["MAP".into()]);
        s = reduce(s, added(0));
        s = reduce(s, loaded(0, FileKind::Qrels));
        s = reduce(s, added(1));
        s = reduce(s, Action::Worker(Response::Progress { id: 1, bytes: 4 }));
        assert_eq!(
            s.files[1].status,
            FileStatus::Reading { bytes: 4, size: 10 }
        );
        assert!(s.loading());
        s = reduce(
            s,
            Action::Worker(Response::LoadFailed {
                id: 1,
                name: "bad".into(),
                error: "bad:3: x".into(),
            }),
        );
        assert_eq!(s.files.len(), 1);
        assert!(s.has_qrels());
        assert!(!s.loading());
        assert_eq!(s.errors[0].message, "bad:3: x");
        let id = s.errors[0].id;
        s = reduce(s, Action::DismissError { id });
        assert!(s.errors.is_empty());
    }

    #[test]
    fn a_loaded_run_whose_tail_fails_later_is_removed_and_the_error_shown() {
        // A run read in two places is shown once both parts are scored; if its tail, read
        // again afterwards, no longer joins (crates/worker/src/engine/split_run.rs), the worker
        // drops it.
        let mut s = AppState::new(vec!["MAP".into()]);
        for (id, kind) in [(0, FileKind::Qrels), (1, FileKind::Run), (2, FileKind::Run)] {
            s = reduce(s, added(id));
            s = reduce(s, loaded(id, kind));
        }
        s = reduce(
            s,
            Action::Worker(Response::LoadFailed {
                id: 1,
                name: "f1".into(),
                error: "f1: the file changed while it was read (NotReadableError); load it again"
                    .into(),
            }),
        );
        let left: Vec<u32> = s.files.iter().map(|f| f.id).collect();
        assert_eq!(left, [0, 2]);
        assert!(s
            .files
            .iter()
            .all(|f| matches!(f.status, FileStatus::Loaded { .. })));
        assert!(
            !s.loading(),
            "nothing is loading, so the page's evaluation effect runs again"
        );
        assert!(s.errors[0].message.contains("load it again"));
    }

    #[test]
    fn a_new_qrels_file_keeps_only_the_one_before_it_and_runs_accumulate() {
        let mut s = AppState::default();
        for id in 0..3 {
            s = reduce(s, added(id));
            s = reduce(s, loaded(id, FileKind::Qrels));
        }
        for id in 3..5 {
            s = reduce(s, added(id));
            s = reduce(s, loaded(id, FileKind::Run));
        }
        assert_eq!(
            s.files.iter().map(|f| f.id).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        assert_eq!(s.runs().len(), 2);
    }

    #[test]
    fn measures_can_be_named_in_the_url() {
        assert_eq!(
            measures_from_query("?demo=0&measures=nDCG%4010,MAP,%20P@5"),
            Some(vec!["nDCG@10".into(), "MAP".into(), "P@5".into()])
        );
        assert_eq!(measures_from_query("?demo=0"), None);
        assert_eq!(measures_from_query("?measures="), None);
        assert_eq!(measures_from_query("?measures=%4"), Some(vec!["%4".into()]));
    }

    /// Qrels (file 0) loaded and a run (file 1) picked.
    fn qrels_loaded_run_picked() -> AppState {
        let mut s = AppState::default();
        s = reduce(s, added(0));
        s = reduce(s, loaded(0, FileKind::Qrels));
        reduce(s, added(1))
    }

    /// A report evaluated ahead of the request, of `of`.
    fn ahead(of: ragscope_protocol::ReportOf, generation: u32) -> Action {
        Action::Worker(Response::Report(Box::new(Report {
            generation,
            ahead_of: Some(of),
            ..Report::default()
        })))
    }

    #[test]
    fn a_report_evaluated_ahead_is_taken_only_for_the_awaited_files_and_choices() {
        let mut s = reduce(qrels_loaded_run_picked(), loaded(1, FileKind::Run));
        let of = s.evaluation_of();
        assert_eq!(of.files, [0, 1]);
        let shown = |s: &AppState| s.report.as_ref().map(|r| r.generation);
        // not awaited yet: kept, and taken when the page asks
        s = reduce(s, ahead(of.clone(), 9));
        assert!(shown(&s).is_none() && s.ahead.is_some());
        s = reduce(s, Action::EvaluationStarted { generation: 3 });
        assert_eq!((shown(&s), s.awaiting), (Some(9), None));
        s = reduce(s, Action::EvaluationStarted { generation: 4 });
        // another measure, another baseline, or another set of files: not this evaluation
        let mut other = of.clone();
        other.measures.push("bpref".into());
        s = reduce(s, ahead(other, 10));
        let mut other = of.clone();
        other.baseline = Some(1);
        s = reduce(s, ahead(other, 10));
        let mut other = of.clone();
        other.files.push(2);
        s = reduce(s, ahead(other, 10));
        assert!(shown(&s) == Some(9) && s.awaiting.is_some());
        // the same files and choices, whatever its generation
        s = reduce(s, ahead(of, 11));
        assert_eq!((shown(&s), s.awaiting), (Some(11), None));
        // the answer to the request itself comes later and changes nothing
        s = reduce(
            s,
            Action::Worker(Response::Report(Box::new(Report {
                generation: 4,
                ..Report::default()
            }))),
        );
        assert_eq!(shown(&s), Some(11));
    }

    #[test]
    fn a_report_evaluated_ahead_before_the_file_shows_is_taken_when_the_page_asks() {
        let mut s = qrels_loaded_run_picked();
        let mut of = s.evaluation_of();
        of.files.push(1);
        // before the run's `Loaded`: kept, not shown
        s = reduce(s, ahead(of.clone(), 9));
        assert!(s.report.is_none() && s.ahead.is_some());
        // not of these files yet: the page would ask
        assert!(!s.ahead_fits());
        s = reduce(s, loaded(1, FileKind::Run));
        // of exactly these: the page takes it and asks nothing (src/ui/components/app.rs)
        assert!(s.ahead_fits());
        s = reduce(s, Action::EvaluationStarted { generation: 4 });
        assert!(s.report.is_some() && s.awaiting.is_none() && s.ahead.is_none());
        // kept, but the measures changed before the page asked: dropped, the request awaited
        let mut s2 = reduce(qrels_loaded_run_picked(), ahead(of, 9));
        s2 = reduce(s2, loaded(1, FileKind::Run));
        s2 = reduce(s2, Action::SetMeasures(vec!["bpref".into()]));
        assert!(!s2.ahead_fits());
        s2 = reduce(s2, Action::EvaluationStarted { generation: 4 });
        assert!(s2.report.is_none() && s2.awaiting.is_some() && s2.ahead.is_none());
    }

    #[test]
    fn a_cancelled_evaluation_ignores_its_late_report() {
        let mut s = AppState::default();
        s = reduce(s, Action::EvaluationStarted { generation: 1 });
        s = reduce(
            s,
            Action::Worker(Response::EvalProgress {
                generation: 1,
                done: 5,
                total: 10,
            }),
        );
        assert_eq!(s.awaiting, Some((1, 5, 10)));
        s = reduce(s, Action::CancelEvaluation);
        let report = Report {
            generation: 1,
            ..Report::default()
        };
        s = reduce(
            s,
            Action::Worker(Response::Report(Box::new(report.clone()))),
        );
        assert!(s.report.is_none());
        s = reduce(s, Action::EvaluationStarted { generation: 2 });
        s = reduce(
            s,
            Action::Worker(Response::Report(Box::new(Report {
                generation: 2,
                ..report
            }))),
        );
        assert!(s.report.is_some() && s.awaiting.is_none());
    }
}
