//! App state as a reducer: every change is an [`Action`], so state transitions are testable.

use crate::protocol::{FileId, FileKind, Report, Response};
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
    Reading,
    Parsing,
    Loaded { kind: FileKind, summary: String },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ErrorNote {
    pub id: u32,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct AppState {
    pub files: Vec<LoadedFile>,
    pub next_id: FileId,
    pub measures: Vec<String>,
    pub report: Option<Report>,
    pub evaluating: bool,
    pub errors: Vec<ErrorNote>,
    next_error: u32,
}

impl AppState {
    pub fn new(measures: Vec<String>) -> Self {
        Self {
            measures,
            ..Self::default()
        }
    }

    pub fn has_qrels(&self) -> bool {
        self.files.iter().any(|f| {
            matches!(
                f.status,
                FileStatus::Loaded {
                    kind: FileKind::Qrels,
                    ..
                }
            )
        })
    }

    pub fn has_run(&self) -> bool {
        self.files.iter().any(|f| {
            matches!(
                f.status,
                FileStatus::Loaded {
                    kind: FileKind::Run,
                    ..
                }
            )
        })
    }

    pub fn busy(&self) -> bool {
        self.evaluating
            || self
                .files
                .iter()
                .any(|f| !matches!(f.status, FileStatus::Loaded { .. }))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A file was picked or dropped; its bytes are being read.
    FileAdded {
        id: FileId,
        name: String,
    },
    /// Its bytes were sent to the worker.
    FileSent {
        id: FileId,
    },
    /// Reading the file in the browser failed.
    FileReadFailed {
        id: FileId,
        error: String,
    },
    RemoveFile {
        id: FileId,
    },
    EvaluationStarted,
    Worker(Response),
    DismissError {
        id: u32,
    },
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::FileAdded { id, name } => {
                s.next_id = s.next_id.max(id + 1);
                s.files.push(LoadedFile {
                    id,
                    name,
                    status: FileStatus::Reading,
                });
            }
            Action::FileSent { id } => {
                if let Some(f) = s.files.iter_mut().find(|f| f.id == id) {
                    f.status = FileStatus::Parsing;
                }
            }
            Action::FileReadFailed { id, error } => {
                s.files.retain(|f| f.id != id);
                s.push_error(error);
            }
            Action::RemoveFile { id } => s.files.retain(|f| f.id != id),
            Action::EvaluationStarted => s.evaluating = true,
            Action::Worker(Response::Loaded {
                id, kind, summary, ..
            }) => {
                // A second qrels file replaces the first, as it does in the worker.
                if kind == FileKind::Qrels {
                    s.files.retain(|f| {
                        f.id == id
                            || !matches!(
                                f.status,
                                FileStatus::Loaded {
                                    kind: FileKind::Qrels,
                                    ..
                                }
                            )
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
            Action::Worker(Response::Report(report)) => {
                s.evaluating = false;
                s.report = Some(report);
            }
            Action::Worker(Response::EvalFailed { error }) => {
                s.evaluating = false;
                s.report = None;
                s.push_error(error);
            }
            Action::DismissError { id } => s.errors.retain(|e| e.id != id),
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

    #[test]
    fn a_failed_load_keeps_what_was_loaded_and_reports_the_error() {
        let mut s = AppState::new(vec!["MAP".into()]);
        s = reduce(
            s,
            Action::FileAdded {
                id: 0,
                name: "q".into(),
            },
        );
        s = reduce(
            s,
            Action::Worker(Response::Loaded {
                id: 0,
                name: "q".into(),
                kind: FileKind::Qrels,
                summary: "3 topics".into(),
            }),
        );
        s = reduce(
            s,
            Action::FileAdded {
                id: 1,
                name: "bad".into(),
            },
        );
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
        assert_eq!(s.errors.len(), 1);
        assert_eq!(s.errors[0].message, "bad:3: x");
        let id = s.errors[0].id;
        s = reduce(s, Action::DismissError { id });
        assert!(s.errors.is_empty());
    }

    #[test]
    fn a_second_qrels_file_replaces_the_first() {
        let mut s = AppState::default();
        for id in 0..2 {
            s = reduce(
                s,
                Action::FileAdded {
                    id,
                    name: format!("q{id}"),
                },
            );
            s = reduce(
                s,
                Action::Worker(Response::Loaded {
                    id,
                    name: format!("q{id}"),
                    kind: FileKind::Qrels,
                    summary: String::new(),
                }),
            );
        }
        assert_eq!(s.files.len(), 1);
        assert_eq!(s.files[0].id, 1);
        assert_eq!(s.next_id, 2);
    }
}
