//! The top-level component: owns the state reducer and the bridge to the evaluation worker.

use super::drop_zone::DropZone;
use super::error_panel::ErrorPanel;
use super::file_list::FileList;
use super::results_table::ResultsTable;
use crate::agent::EvalReactor;
use crate::protocol::Request;
use crate::ui::state::{Action, AppState, FileStatus};
use yew::platform::spawn_local;
use yew::prelude::*;
use yew_agent::reactor::{use_reactor_bridge, ReactorEvent, ReactorProvider};

/// The measures shown before the user picks any.
pub const DEFAULT_MEASURES: &[&str] = &["MAP", "MRR", "nDCG@10", "P@10", "R@100", "bpref", "Rprec"];

/// The demo loaded at start (files served from the app's own origin), unless the URL says `?demo=0`.
const DEMO_FILES: &[&str] = &["demo/qrels.test", "demo/results.test"];

#[function_component(App)]
pub fn app() -> Html {
    html! {
        // A relative path, so the app runs from any sub-path of a static host.
        <ReactorProvider<EvalReactor> path="worker.js">
            <Main />
        </ReactorProvider<EvalReactor>>
    }
}

#[function_component(Main)]
fn main_view() -> Html {
    let state =
        use_reducer(|| AppState::new(DEFAULT_MEASURES.iter().map(|m| m.to_string()).collect()));
    let next_id = use_mut_ref(|| 0u32);

    let bridge = {
        let dispatch = state.dispatcher();
        use_reactor_bridge::<EvalReactor, _>(move |event| {
            if let ReactorEvent::Output(response) = event {
                dispatch.dispatch(Action::Worker(response));
            }
        })
    };

    // Reads a file's bytes off the UI thread's event loop and hands them to the worker.
    let add_file = {
        let bridge = bridge.clone();
        let dispatch = state.dispatcher();
        Callback::from(move |source: FileSource| {
            let id = {
                let mut n = next_id.borrow_mut();
                *n += 1;
                *n - 1
            };
            let name = source.name();
            dispatch.dispatch(Action::FileAdded {
                id,
                name: name.clone(),
            });
            let bridge = bridge.clone();
            let dispatch = dispatch.clone();
            spawn_local(async move {
                match source.read().await {
                    Ok(bytes) => {
                        bridge.send(Request::Load { id, name, bytes });
                        dispatch.dispatch(Action::FileSent { id });
                    }
                    Err(error) => dispatch.dispatch(Action::FileReadFailed { id, error }),
                }
            });
        })
    };

    // Load the bundled demo once.
    {
        let add_file = add_file.clone();
        use_effect_with((), move |_| {
            let wants_demo = gloo::utils::window()
                .location()
                .search()
                .map(|q| !q.contains("demo=0"))
                .unwrap_or(true);
            if wants_demo {
                for path in DEMO_FILES {
                    add_file.emit(FileSource::Url(path.to_string()));
                }
            }
        });
    }

    // Re-evaluate whenever the set of loaded files changes and nothing is in flight.
    {
        let loaded: Vec<u32> = state
            .files
            .iter()
            .filter(|f| matches!(f.status, FileStatus::Loaded { .. }))
            .map(|f| f.id)
            .collect();
        let ready = state.has_qrels() && state.has_run() && !state.busy();
        let measures = state.measures.clone();
        let bridge = bridge.clone();
        let dispatch = state.dispatcher();
        use_effect_with((loaded, ready), move |(_, ready)| {
            if *ready {
                dispatch.dispatch(Action::EvaluationStarted);
                bridge.send(Request::Evaluate { measures });
            }
        });
    }

    let on_files = {
        let add_file = add_file.clone();
        Callback::from(move |files: Vec<web_sys::File>| {
            for f in files {
                add_file.emit(FileSource::File(f));
            }
        })
    };
    let on_remove = {
        let dispatch = state.dispatcher();
        let bridge = bridge.clone();
        Callback::from(move |id: u32| {
            bridge.send(Request::Remove { id });
            dispatch.dispatch(Action::RemoveFile { id });
        })
    };
    let on_dismiss = {
        let dispatch = state.dispatcher();
        Callback::from(move |id: u32| dispatch.dispatch(Action::DismissError { id }))
    };

    html! {
        <div class="page">
            <header class="masthead">
                <h1>{ "ragscope" }</h1>
                <p class="tagline">
                    { "Evaluate retrieval runs in your browser. Your files never leave this machine." }
                </p>
            </header>
            <main>
                <ErrorPanel errors={state.errors.clone()} on_dismiss={on_dismiss} />
                <DropZone on_files={on_files} />
                <FileList files={state.files.clone()} on_remove={on_remove} />
                <ResultsTable report={state.report.clone()} evaluating={state.evaluating} />
            </main>
        </div>
    }
}

/// Where a file's bytes come from: the user's disk or the app's own origin (the demo).
#[derive(Clone)]
pub enum FileSource {
    File(web_sys::File),
    Url(String),
}

impl FileSource {
    fn name(&self) -> String {
        match self {
            FileSource::File(f) => f.name(),
            FileSource::Url(u) => u.rsplit('/').next().unwrap_or(u).to_string(),
        }
    }

    async fn read(self) -> Result<Vec<u8>, String> {
        match self {
            FileSource::File(f) => {
                let name = f.name();
                gloo::file::futures::read_as_bytes(&gloo::file::File::from(f))
                    .await
                    .map_err(|e| format!("{name}: could not be read: {e}"))
            }
            FileSource::Url(url) => {
                let fail = |e: gloo::net::Error| format!("{url}: could not be fetched: {e}");
                let response = gloo::net::http::Request::get(&url)
                    .send()
                    .await
                    .map_err(fail)?;
                if !response.ok() {
                    return Err(format!(
                        "{url}: could not be fetched: HTTP {}",
                        response.status()
                    ));
                }
                response.binary().await.map_err(fail)
            }
        }
    }
}
