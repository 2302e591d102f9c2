//! The UI's side of "compute locally": what the worker said about the model, WebGPU and the
//! utilities being computed. Folded into [`AppState`] by its reducer.

use crate::ui::state::{AppState, FileStatus, LoadedFile};
use ragscope_protocol::compute::{
    BackendInfo, ComputeEvent, ComputeProgress, GpuInfo, MemoryReport, ModelInfo, ScoredPassages,
};

#[derive(Clone, Debug, PartialEq, Default)]
pub struct ComputeState {
    /// A picked model file is being opened (its name).
    pub opening: Option<String>,
    pub model: Option<ModelInfo>,
    pub gpu: Option<GpuInfo>,
    /// Progress of the running computation; None when none runs.
    pub running: Option<ComputeProgress>,
    /// The backend of the running (or last) computation, and why.
    pub backend: Option<BackendInfo>,
    /// The last finished computation.
    pub finished: Option<Finished>,
    /// The last thing that went wrong here (also shown in the error panel).
    pub error: Option<String>,
    /// "Answer the contexts" (ui::answering_state).
    pub answers: crate::ui::answering_state::AnsweringState,
    /// The last passages scored for the Learn page (`ComputeSource::Passages`).
    pub scored: Option<ScoredPassages>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Finished {
    pub name: String,
    pub tsv: String,
    pub passages: usize,
    pub seconds: f64,
    pub backend: String,
    pub memory: MemoryReport,
}

/// Actions the compute panel dispatches itself (the worker's events arrive as `Response::Compute`).
pub fn opening(s: &mut AppState, name: String) {
    s.compute.opening = Some(name);
    s.compute.error = None;
}

pub fn started(s: &mut AppState) {
    s.compute.running = Some(ComputeProgress::default());
    s.compute.backend = None;
    s.compute.error = None;
}

/// Returns an error for the error panel, if any.
pub fn apply(s: &mut AppState, event: ComputeEvent) -> Option<String> {
    let c = &mut s.compute;
    match event {
        ComputeEvent::ModelOpened(info) => {
            c.opening = None;
            c.model = Some(info);
            None
        }
        ComputeEvent::ModelFailed(e) => {
            c.opening = None;
            c.error = Some(e.clone());
            Some(e)
        }
        ComputeEvent::Gpu(g) => {
            c.gpu = Some(g);
            None
        }
        ComputeEvent::Backend(b) => {
            c.backend = Some(b);
            None
        }
        ComputeEvent::Progress(p) => {
            c.running = Some(p);
            None
        }
        ComputeEvent::Done {
            result,
            name,
            tsv,
            passages,
            seconds,
            backend,
            memory,
        } => {
            c.running = None;
            c.finished = Some(Finished {
                name: name.clone(),
                tsv,
                passages,
                seconds,
                backend,
                memory,
            });
            // The worker follows with `Loaded { id: result }`: list the file now so it lands.
            if !s.files.iter().any(|f| f.id == result) {
                s.files.push(LoadedFile {
                    id: result,
                    name,
                    status: FileStatus::Reading { bytes: 0, size: 0 },
                });
            }
            None
        }
        ComputeEvent::Scored(scored) => {
            c.running = None;
            c.scored = Some(scored);
            None
        }
        ComputeEvent::Failed(e) => {
            c.running = None;
            c.error = Some(e.clone());
            Some(e)
        }
        ComputeEvent::Cancelled { .. } => {
            c.running = None;
            None
        }
        ComputeEvent::Answers(e) => crate::ui::answering_state::apply(s, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::state::Action;
    use ragscope_protocol::{FileKind, Response};
    use std::rc::Rc;
    use yew::Reducible;

    fn reduce(s: AppState, a: Action) -> AppState {
        (*Rc::new(s).reduce(a)).clone()
    }

    #[test]
    fn finished_utilities_become_a_loaded_file() {
        let mut s = AppState::default();
        s = reduce(s, Action::ComputeStarted);
        assert!(s.compute.running.is_some());
        s = reduce(
            s,
            Action::Worker(Response::Compute(ComputeEvent::Done {
                result: 7,
                name: "u.tsv".into(),
                tsv: "qid\tdocno\trelevant\tno_res_prob\n".into(),
                passages: 0,
                seconds: 0.0,
                backend: "CPU".into(),
                memory: MemoryReport::default(),
            })),
        );
        assert!(s.compute.running.is_none());
        s = reduce(
            s,
            Action::Worker(Response::Loaded {
                id: 7,
                name: "u.tsv".into(),
                kind: FileKind::Utilities,
                summary: "1 question".into(),
            }),
        );
        assert!(matches!(
            s.files[0].status,
            FileStatus::Loaded {
                kind: FileKind::Utilities,
                ..
            }
        ));
    }

    #[test]
    fn the_backend_and_its_reason_are_kept_until_the_next_run() {
        let mut s = reduce(AppState::default(), Action::ComputeStarted);
        let cpu = BackendInfo {
            gpu: false,
            label: "CPU".into(),
            reason: "WebGPU cannot be used: no adapter".into(),
        };
        s = reduce(
            s,
            Action::Worker(Response::Compute(ComputeEvent::Backend(cpu.clone()))),
        );
        assert_eq!(s.compute.backend.as_ref(), Some(&cpu));
        assert!(s.errors.is_empty(), "a CPU run is no error");
        s = reduce(s, Action::ComputeStarted);
        assert!(s.compute.backend.is_none());
    }

    #[test]
    fn a_failed_model_is_reported_and_keeps_nothing_half_open() {
        let mut s = AppState::default();
        s = reduce(s, Action::ComputeOpening("m.gguf".into()));
        s = reduce(
            s,
            Action::Worker(Response::Compute(ComputeEvent::ModelFailed(
                "m.gguf: not a GGUF file".into(),
            ))),
        );
        assert!(s.compute.opening.is_none() && s.compute.model.is_none());
        assert_eq!(s.errors.len(), 1);
    }
}
