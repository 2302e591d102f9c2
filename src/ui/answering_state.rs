//! The UI's side of "answer the contexts" (compute locally): the run's backend, progress with
//! outcome counts, and the last answered file. Folded into the compute state by its reducer.

use crate::ui::state::{AppState, FileStatus, LoadedFile};
use ragscope_protocol::answer_generation::{AnswerEvent, AnswerProgress, AnswersDone};
use ragscope_protocol::compute::BackendInfo;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct AnsweringState {
    /// Progress of the running answers; None when none runs.
    pub running: Option<AnswerProgress>,
    /// The backend of the running (or last) run, and why.
    pub backend: Option<BackendInfo>,
    pub finished: Option<AnswersDone>,
    pub error: Option<String>,
}

pub fn started(s: &mut AppState) {
    let a = &mut s.compute.answers;
    a.running = Some(AnswerProgress::default());
    a.backend = None;
    a.error = None;
}

/// Returns an error for the error panel, if any.
pub fn apply(s: &mut AppState, event: AnswerEvent) -> Option<String> {
    let a = &mut s.compute.answers;
    match event {
        AnswerEvent::Backend(b) => a.backend = Some(b),
        AnswerEvent::Progress(p) => a.running = Some(p),
        AnswerEvent::Done(done) => {
            a.running = None;
            // The worker follows with `Loaded { id: result }`: list the file now so it lands.
            if !s.files.iter().any(|f| f.id == done.result) {
                s.files.push(LoadedFile {
                    id: done.result,
                    name: done.name.clone(),
                    status: FileStatus::Reading { bytes: 0, size: 0 },
                });
            }
            a.finished = Some(done);
        }
        AnswerEvent::Failed(e) => {
            a.running = None;
            a.error = Some(e.clone());
            return Some(e);
        }
        AnswerEvent::Cancelled { .. } => a.running = None,
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::state::Action;
    use ragscope_protocol::compute::ComputeEvent;
    use ragscope_protocol::{FileKind, Response};
    use std::rc::Rc;
    use yew::Reducible;

    fn reduce(s: AppState, a: Action) -> AppState {
        (*Rc::new(s).reduce(a)).clone()
    }

    fn event(e: AnswerEvent) -> Action {
        Action::Worker(Response::Compute(ComputeEvent::Answers(e)))
    }

    #[test]
    fn answered_contexts_become_the_loaded_context_sets() {
        let mut s = reduce(AppState::default(), Action::AnswersStarted);
        assert!(s.compute.answers.running.is_some());
        assert!(s.compute.running.is_none(), "utilities are not running");
        s = reduce(
            s,
            event(AnswerEvent::Done(AnswersDone {
                result: 4,
                name: "answers-m-c.jsonl".into(),
                jsonl: String::new(),
                progress: AnswerProgress::default(),
                backend: "CPU".into(),
            })),
        );
        assert!(s.compute.answers.running.is_none());
        s = reduce(
            s,
            Action::Worker(Response::Loaded {
                id: 4,
                name: "answers-m-c.jsonl".into(),
                kind: FileKind::ContextSets,
                summary: "2 questions, 6 contexts".into(),
            }),
        );
        assert!(matches!(
            s.files[0].status,
            FileStatus::Loaded {
                kind: FileKind::ContextSets,
                ..
            }
        ));
    }

    #[test]
    fn a_failure_ends_the_run_and_is_reported() {
        let mut s = reduce(AppState::default(), Action::AnswersStarted);
        s = reduce(s, event(AnswerEvent::Failed("c.jsonl:3: too long".into())));
        assert!(s.compute.answers.running.is_none());
        assert_eq!(s.errors.len(), 1);
    }
}
