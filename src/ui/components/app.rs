//! The top-level component: owns the state reducer and the bridge to the evaluation worker.

use super::agreement::AgreementView;
use super::compute::ComputePanel;
use super::controls::Controls;
use super::demo_picker::{Demo, DemoPicker};
use super::distribution::DistributionView;
use super::drop_zone::DropZone;
use super::error_panel::ErrorPanel;
use super::file_list::FileList;
use super::judges::JudgesPage;
use super::learn::LearnPage;
use super::nav::Nav;
use super::per_query::PerQueryView;
use super::progress::ProgressPanel;
use super::rag::RagView;
use super::results_table::ResultsTable;
use super::tabs::Tabs;
use super::topic::TopicDrill;
use super::tournament::TournamentView;
use crate::ui::hooks::use_judge_effects::use_judge_effects;
use crate::ui::hooks::use_route::use_route;
use crate::ui::judges_state::{JudgeAction, JudgeState};
use crate::ui::persist;
use crate::ui::route::Route;
use crate::ui::state::{Action, AppState, FileStatus, Tab, Theme};
use crate::worker_link::EvalWorker;
use futures::channel::mpsc;
use futures::StreamExt;
use ragscope_protocol::judges::JudgeRequest;
use ragscope_protocol::{EvalRequest, FileId, Request, Response, SLICE_BYTES};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::platform::spawn_local;
use yew::prelude::*;
use yew_agent::reactor::{
    use_reactor_bridge, ReactorEvent, ReactorProvider, UseReactorBridgeHandle,
};

/// The measures shown before the user picks any.
pub const DEFAULT_MEASURES: &[&str] = ragscope_eval::DEFAULT_MEASURES;

/// The demo loaded at start (files served from the app's own origin), unless the URL says `?demo=0`.
const DEFAULT_DEMO: Demo = Demo::Rag;

#[function_component(App)]
pub fn app() -> Html {
    html! {
        // A relative path, so the app runs from any sub-path of a static host.
        <ReactorProvider<EvalWorker> path="worker.js">
            <Main />
        </ReactorProvider<EvalWorker>>
    }
}

/// The Blob of each file added (handles, not copies), for the opt-in IndexedDB store.
type Blobs = Rc<RefCell<HashMap<FileId, (String, web_sys::Blob)>>>;

/// Per file being loaded: the channel on which the worker's acknowledgements arrive.
type Acks = Rc<RefCell<HashMap<FileId, mpsc::UnboundedSender<()>>>>;

/// Where a file's bytes come from: the user's disk, the clipboard or the app's own origin.
#[derive(Clone)]
pub enum FileSource {
    File(web_sys::File),
    /// A file kept in IndexedDB from an earlier visit (opt-in).
    Stored(String, web_sys::Blob),
    Text(String, String),
    Url(String),
}

impl FileSource {
    /// The browser's handle on the bytes (a File is a Blob; pasted text becomes one), kept only
    /// to store it when the user opted in; the demo is fetched again instead.
    fn blob(&self) -> Option<web_sys::Blob> {
        match self {
            FileSource::File(f) => Some(f.clone().into()),
            FileSource::Stored(_, b) => Some(b.clone()),
            FileSource::Text(_, t) => {
                let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(t));
                web_sys::Blob::new_with_str_sequence(&parts).ok()
            }
            FileSource::Url(_) => None,
        }
    }

    fn name(&self) -> String {
        match self {
            FileSource::File(f) => f.name(),
            FileSource::Stored(name, _) | FileSource::Text(name, _) => name.clone(),
            FileSource::Url(u) => u.rsplit('/').next().unwrap_or(u).to_string(),
        }
    }

    fn size(&self) -> u64 {
        match self {
            FileSource::File(f) => f.size() as u64,
            FileSource::Stored(_, b) => b.size() as u64,
            FileSource::Text(_, t) => t.len() as u64,
            FileSource::Url(_) => 0,
        }
    }
}

#[function_component(Main)]
fn main_view() -> Html {
    let state = use_reducer(|| {
        let search = gloo::utils::window()
            .location()
            .search()
            .unwrap_or_default();
        AppState::new(
            crate::ui::state::measures_from_query(&search)
                .unwrap_or_else(|| DEFAULT_MEASURES.iter().map(|m| m.to_string()).collect()),
        )
    });
    let next_id = use_mut_ref(|| 0u32);
    let route = use_route();
    // Lives here, not in the Judges page, so a job keeps reporting while another page is shown.
    // The consent to keep judge replies, as the user left it (localStorage).
    let judges = use_reducer(|| {
        let mut s = JudgeState::default();
        s.form.keep_replies = persist::consented(ragscope_platform::stores::JUDGE_CACHE);
        s
    });
    let generation = use_mut_ref(|| 0u32);
    let acks: Acks = (*use_memo((), |_| Acks::default())).clone();
    let cancelled: Rc<RefCell<HashSet<FileId>>> =
        (*use_memo((), |_| Rc::new(RefCell::new(HashSet::new())))).clone();

    let blobs: Blobs = (*use_memo((), |_| Blobs::default())).clone();
    let remember = use_state(persist::enabled);

    let bridge = {
        let dispatch = state.dispatcher();
        let judge_dispatch = judges.dispatcher();
        let acks = acks.clone();
        let cancelled = cancelled.clone();
        use_reactor_bridge::<EvalWorker, _>(move |event| {
            if let ReactorEvent::Output(response) = event {
                // A file the user removed while it loaded may fail to open once its object URL
                // is revoked: not an error worth showing.
                if matches!(&response, Response::LoadFailed { id, .. } if cancelled.borrow().contains(id))
                {
                    return;
                }
                match &response {
                    Response::Progress { id, .. } => {
                        if let Some(tx) = acks.borrow().get(id) {
                            let _ = tx.unbounded_send(());
                        }
                    }
                    Response::Loaded { id, .. } | Response::LoadFailed { id, .. } => {
                        acks.borrow_mut().remove(id);
                    }
                    Response::Timings(t) => crate::ui::perf_marks::record(t),
                    Response::Report(r) => crate::ui::perf_marks::mark(&format!(
                        "report {} received{}",
                        r.generation,
                        if r.ahead_of.is_some() {
                            " (evaluated ahead)"
                        } else {
                            ""
                        }
                    )),
                    _ => {}
                }
                match response {
                    Response::Judge(r) => judge_dispatch.dispatch(JudgeAction::Worker(r)),
                    response => dispatch.dispatch(Action::Worker(response)),
                }
            }
        })
    };

    // The worker starts a helper from its own script (crates/worker/src/engine/shard.rs), whose URL
    // it cannot see from inside: resolved here as gloo-worker resolves it for the worker.
    {
        let bridge = bridge.clone();
        use_effect_with((), move |_| {
            // before any file: picked files are posted there at once
            // (crates/platform/src/blob_channel.rs)
            if let Ok(channel) = ragscope_platform::blob_channel::open_files_channel() {
                bridge.send(Request::Files { channel });
            }
            let location = gloo::utils::window().location();
            // `?helper=0`: every file read by the one worker (to compare, or where nested
            // workers misbehave)
            let wanted = !location.search().is_ok_and(|q| q.contains("helper=0"));
            let url = location
                .href()
                .ok()
                .and_then(|href| web_sys::Url::new_with_base("worker.js", &href).ok())
                .filter(|_| wanted);
            if let Some(url) = url {
                bridge.send(Request::Helper {
                    script_url: url.href(),
                });
            }
        });
    }

    // "Compute locally": a result file gets the next file id; opening/starting shows at once.
    let on_compute = {
        let (bridge, dispatch, ids) = (bridge.clone(), state.dispatcher(), next_id.clone());
        Callback::from(
            move |mut request: ragscope_protocol::compute::ComputeRequest| {
                use ragscope_protocol::compute::ComputeRequest as C;
                match &mut request {
                    C::Start { result, .. } => {
                        let mut n = ids.borrow_mut();
                        *result = *n;
                        *n += 1;
                        dispatch.dispatch(Action::ComputeStarted);
                    }
                    C::OpenModel { name, .. } => {
                        dispatch.dispatch(Action::ComputeOpening(name.clone()))
                    }
                    C::Answer(start) => {
                        let mut n = ids.borrow_mut();
                        start.result = *n;
                        *n += 1;
                        dispatch.dispatch(Action::AnswersStarted);
                    }
                    _ => {}
                }
                bridge.send(Request::Compute(request));
            },
        )
    };

    let add_file = {
        let bridge = bridge.clone();
        let dispatch = state.dispatcher();
        let acks = acks.clone();
        let blobs = blobs.clone();
        let cancelled = cancelled.clone();
        // A local computation's loop hands other requests to the plain handler, which cannot
        // read a file by URL: meanwhile files go to the worker in slices from here.
        let computing = state.compute.running.is_some() || state.compute.answers.running.is_some();
        Callback::from(move |source: FileSource| {
            let id = {
                let mut n = next_id.borrow_mut();
                *n += 1;
                *n - 1
            };
            let name = source.name();
            if let Some(blob) = source.blob() {
                blobs.borrow_mut().insert(id, (name.clone(), blob));
            }
            dispatch.dispatch(Action::FileAdded {
                id,
                name: name.clone(),
                size: source.size(),
            });
            let (bridge, dispatch, acks, cancelled) = (
                bridge.clone(),
                dispatch.clone(),
                acks.clone(),
                cancelled.clone(),
            );
            spawn_local(async move {
                let result = match source {
                    FileSource::File(f) if !computing => {
                        read_in_worker(f.into(), id, name, &bridge, &acks).await
                    }
                    FileSource::Stored(_, b) if !computing => {
                        read_in_worker(b, id, name, &bridge, &acks).await
                    }
                    source => stream(source, id, name, &bridge, &acks, &cancelled).await,
                };
                if let Err(error) = result {
                    acks.borrow_mut().remove(&id);
                    bridge.send(Request::Cancel { id });
                    dispatch.dispatch(Action::FileReadFailed { id, error });
                }
            });
        })
    };

    // Load the bundled demo once.
    {
        let add_file = add_file.clone();
        let dispatch = state.dispatcher();
        use_effect_with((), move |_| {
            let wants_demo = gloo::utils::window()
                .location()
                .search()
                .map(|q| !q.contains("demo=0"))
                .unwrap_or(true);
            spawn_local(async move {
                // Files kept from an earlier visit (opt-in) come back instead of the demo.
                let stored = if persist::enabled() {
                    persist::load().await.unwrap_or_default()
                } else {
                    Vec::new()
                };
                if !stored.is_empty() {
                    for (name, blob) in stored {
                        add_file.emit(FileSource::Stored(name, blob));
                    }
                } else if wants_demo {
                    // The demo's measures, unless the URL chose some.
                    let search = gloo::utils::window()
                        .location()
                        .search()
                        .unwrap_or_default();
                    if crate::ui::state::measures_from_query(&search).is_none() {
                        dispatch.dispatch(Action::SetMeasures(DEFAULT_DEMO.measures()));
                    }
                    for path in DEFAULT_DEMO.files() {
                        add_file.emit(FileSource::Url(path.to_string()));
                    }
                }
            });
        });
    }

    // With the user's consent, keep the loaded files in IndexedDB whenever the set changes.
    {
        let loaded: Vec<u32> = state
            .files
            .iter()
            .filter(|f| matches!(f.status, FileStatus::Loaded { .. }))
            .map(|f| f.id)
            .collect();
        let blobs = blobs.clone();
        let dispatch = state.dispatcher();
        use_effect_with((loaded, *remember), move |(loaded, remember)| {
            if *remember {
                let files: Vec<(String, web_sys::Blob)> = {
                    let b = blobs.borrow();
                    loaded.iter().filter_map(|id| b.get(id).cloned()).collect()
                };
                spawn_local(async move {
                    if let Err(e) = persist::save(files).await {
                        dispatch.dispatch(Action::Notify(format!(
                            "Could not keep the files in this browser: {e}"
                        )));
                    }
                });
            }
        });
    }

    // Offline after the first visit: the service worker caches the app's own files.
    use_effect_with((), |_| {
        let sw = gloo::utils::window().navigator().service_worker();
        let registration = sw.register("./sw.js");
        // Without a service worker (e.g. a private window) the app still works online.
        spawn_local(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(registration).await;
        });
    });

    // The theme lives on <html data-theme> so the CSS variables switch in one place.
    use_effect_with(state.theme, |theme| {
        if let Some(root) = gloo::utils::document().document_element() {
            let _ = match theme {
                Theme::System => root.remove_attribute("data-theme"),
                t => root.set_attribute("data-theme", t.label()),
            };
        }
    });

    // Re-evaluate whenever the loaded files or the choices change and nothing is loading.
    {
        let loaded: Vec<u32> = state
            .files
            .iter()
            .filter(|f| matches!(f.status, FileStatus::Loaded { .. }))
            .map(|f| f.id)
            .collect();
        let ready = !loaded.is_empty() && !state.loading();
        let request = (state.measures.clone(), state.baseline, state.test);
        // the worker evaluated exactly this ahead: taken (by `EvaluationStarted`), not asked
        // for again (the worker would answer after parsing the run whole, the same report)
        let taken_ahead = state.ahead_fits();
        let bridge = bridge.clone();
        let dispatch = state.dispatcher();
        use_effect_with(
            (loaded, ready, request),
            move |(_, ready, (measures, baseline, test))| {
                if *ready {
                    let g = {
                        let mut g = generation.borrow_mut();
                        *g += 1;
                        *g
                    };
                    dispatch.dispatch(Action::EvaluationStarted { generation: g });
                    if !taken_ahead {
                        bridge.send(Request::Evaluate(EvalRequest {
                            measures: measures.clone(),
                            baseline: *baseline,
                            test: *test,
                            generation: g,
                        }));
                    }
                }
            },
        );
    }

    let judge_ids = use_mut_ref(|| 0u32);
    use_judge_effects(&judges, {
        let add_file = add_file.clone();
        Callback::from(move |(name, text)| add_file.emit(FileSource::Text(name, text)))
    });

    let on_files = {
        let add_file = add_file.clone();
        Callback::from(move |files: Vec<web_sys::File>| {
            for f in files {
                add_file.emit(FileSource::File(f));
            }
        })
    };
    let on_paste = {
        let add_file = add_file.clone();
        let count = use_mut_ref(|| 0u32);
        Callback::from(move |text: String| {
            *count.borrow_mut() += 1;
            add_file.emit(FileSource::Text(
                format!("pasted-{}.txt", count.borrow()),
                text,
            ));
        })
    };
    let on_remove = {
        let dispatch = state.dispatcher();
        let bridge = bridge.clone();
        let cancelled = cancelled.clone();
        let acks = acks.clone();
        let blobs = blobs.clone();
        Callback::from(move |id: u32| {
            cancelled.borrow_mut().insert(id);
            // Closing the acknowledgement channel stops a load in flight.
            acks.borrow_mut().remove(&id);
            blobs.borrow_mut().remove(&id);
            bridge.send(Request::Remove { id });
            dispatch.dispatch(Action::RemoveFile { id });
        })
    };
    // A bundled demo replaces whatever is loaded.
    let on_demo = {
        let (on_remove, add_file, dispatch) =
            (on_remove.clone(), add_file.clone(), state.dispatcher());
        let ids: Vec<u32> = state.files.iter().map(|f| f.id).collect();
        Callback::from(move |demo: Demo| {
            for id in &ids {
                on_remove.emit(*id);
            }
            dispatch.dispatch(Action::SetMeasures(demo.measures()));
            for path in demo.files() {
                add_file.emit(FileSource::Url(path.to_string()));
            }
        })
    };
    let on_cancel_eval = {
        let dispatch = state.dispatcher();
        Callback::from(move |_| dispatch.dispatch(Action::CancelEvaluation))
    };
    let on_dismiss = {
        let dispatch = state.dispatcher();
        Callback::from(move |id: u32| dispatch.dispatch(Action::DismissError { id }))
    };
    let on_remember = {
        let remember = remember.clone();
        Callback::from(move |e: Event| {
            let on = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .is_some_and(|i| i.checked());
            persist::set_enabled(on);
            if !on {
                spawn_local(async {
                    let _ = persist::forget().await;
                });
            }
            remember.set(on);
        })
    };
    let on_forget = {
        let judge_dispatch = judges.dispatcher();
        let remember = remember.clone();
        let blobs = blobs.clone();
        let dispatch = state.dispatcher();
        let bridge = bridge.clone();
        let cancelled = cancelled.clone();
        let files: Vec<FileId> = state.files.iter().map(|f| f.id).collect();
        let acks = acks.clone();
        Callback::from(move |_| {
            cancelled.borrow_mut().extend(files.iter().copied());
            acks.borrow_mut().clear();
            blobs.borrow_mut().clear();
            remember.set(false);
            // The worker first: its jobs stop and its tab-long replies go.
            bridge.send(Request::Clear);
            // Every store in crates/platform's list (files, keys, judge replies and batch ids,
            // lost-in-the-middle results) and every consent flag.
            judge_dispatch.dispatch(JudgeAction::Forget);
            spawn_local(async {
                let _ = persist::forget_everything().await;
            });
            dispatch.dispatch(Action::Clear);
        })
    };
    let on_theme = {
        let dispatch = state.dispatcher();
        Callback::from(move |_| dispatch.dispatch(Action::CycleTheme))
    };
    let on_tab = {
        let dispatch = state.dispatcher();
        Callback::from(move |t: Tab| dispatch.dispatch(Action::SetTab(t)))
    };
    let on_topic = {
        let bridge = bridge.clone();
        Callback::from(move |(run, qid): (FileId, String)| bridge.send(Request::Topic { run, qid }))
    };

    let other_page = match &route {
        Route::Evaluate => None,
        Route::Judges => Some(html! {
            <JudgesPage files={state.files.clone()} state={judges.clone()}
                on_request={{ let bridge = bridge.clone(); Callback::from(move |r: JudgeRequest| bridge.send(Request::Judge(r))) }}
                on_files={on_files.clone()} on_paste={on_paste.clone()} on_remove={on_remove.clone()}
                next_id={{ let n = judge_ids.clone(); Callback::from(move |_| { let mut n = n.borrow_mut(); *n += 1; *n }) }}
                on_show_tab={{ let d = state.dispatcher(); Callback::from(move |t| d.dispatch(Action::SetTab(t))) }} />
        }),
        Route::Learn(page) => Some(html! { <LearnPage page={page.clone()}
        compute={state.compute.clone()} on_compute={on_compute.clone()} judges={Some(judges.clone())} /> }),
    };
    let dispatch = state.dispatcher();
    let report = state.report.clone();
    let body = match (&report, state.tab) {
        (None, _) => html! {
            <p class="placeholder" aria-live="polite">{
                if state.evaluating() { "Evaluating…" }
                else { "Load a qrels file and one or more runs (or a RAG file) to see their scores." }
            }</p>
        },
        (Some(r), Tab::Scores) => html! { <ResultsTable report={r.clone()} /> },
        (Some(r), Tab::PerQuery) => html! { <PerQueryView report={r.clone()} /> },
        (Some(r), Tab::Distribution) => html! { <DistributionView report={r.clone()} /> },
        (Some(r), Tab::Topic) => html! {
            <TopicDrill report={r.clone()} view={state.topic.clone()} on_request={on_topic} />
        },
        (Some(r), Tab::Rag) => html! { <RagView report={r.clone()} /> },
        (Some(r), Tab::Answers) => html! { <super::answers::AnswersView report={r.clone()} /> },
        (Some(r), Tab::Tournament) => html! { <TournamentView report={r.clone()} /> },
        (Some(r), Tab::Agreement) => html! { <AgreementView report={r.clone()} /> },
    };

    html! {
        <div class="page">
            <header class="masthead">
                <div class="brand">
                    <h1>{ "ragscope" }</h1>
                    <p class="tagline">
                        { "Evaluate retrieval and RAG runs in your browser. Your files never leave this machine." }
                    </p>
                </div>
                <Nav route={route.clone()} />
                <div class="masthead-actions">
                    <label class="remember" title="Off by default. When on, the files you load are kept in this browser's IndexedDB (never sent anywhere) and come back on your next visit; 'Forget everything' deletes them.">
                        <input type="checkbox" id="remember" checked={*remember} onchange={on_remember} />
                        { "Remember my files here" }
                    </label>
                    <button class="ghost" id="theme" onclick={on_theme}
                        aria-label={format!("Theme: {}. Switch theme", state.theme.label())}>
                        { format!("◐ {}", state.theme.label()) }
                    </button>
                    <button class="ghost danger" id="forget" onclick={on_forget}
                        title="Drop every loaded file and result from this tab (nothing is stored elsewhere)">
                        { "Forget everything" }
                    </button>
                </div>
            </header>
            <main>
                <ErrorPanel errors={state.errors.clone()} on_dismiss={on_dismiss} />
                if let Some(page) = other_page {
                    { page }
                } else {
                <DropZone on_files={on_files} on_paste={on_paste} />
                <DemoPicker on_pick={on_demo} />
                <ProgressPanel files={state.files.clone()} evaluation={state.awaiting}
                    on_cancel_file={on_remove.clone()} on_cancel_eval={on_cancel_eval} />
                <FileList files={state.files.clone()} on_remove={on_remove} />
                <ComputePanel state={state.compute.clone()} on_request={on_compute}
                    udcg_files={state.files.iter().filter(|f| matches!(&f.status,
                        FileStatus::Loaded { kind: ragscope_protocol::FileKind::UdcgJson, .. }))
                        .map(|f| (f.id, f.name.clone())).collect::<Vec<_>>()}
                    runs={state.files.iter().filter(|f| matches!(&f.status,
                        FileStatus::Loaded { kind: ragscope_protocol::FileKind::Run, .. }))
                        .map(|f| (f.id, f.name.clone())).collect::<Vec<_>>()}
                    contexts_files={state.files.iter().filter(|f| matches!(&f.status,
                        FileStatus::Loaded { kind: ragscope_protocol::FileKind::ContextSets, .. }))
                        .map(|f| (f.id, f.name.clone())).collect::<Vec<_>>()} />
                <Controls measures={state.measures.clone()} runs={state.runs()}
                    erag={state.files.iter().any(|f| matches!(&f.status,
                        FileStatus::Loaded { summary, .. } if summary.contains(ragscope_protocol::ERAG_LOADED)))}
                    baseline={state.baseline} test={state.test}
                    on_measures={{ let d = dispatch.clone(); Callback::from(move |v| d.dispatch(Action::SetMeasures(v))) }}
                    on_baseline={{ let d = dispatch.clone(); Callback::from(move |v| d.dispatch(Action::SetBaseline(v))) }}
                    on_test={{ let d = dispatch.clone(); Callback::from(move |v| d.dispatch(Action::SetTest(v))) }} />
                <Tabs current={state.tab} on_select={on_tab} />
                <section id={format!("panel-{}", state.tab.slug())} role="tabpanel"
                    aria-labelledby={format!("tab-{}", state.tab.slug())}
                    class="tab-panel" aria-busy={state.evaluating().to_string()}>
                    { body }
                </section>
                }
            </main>
            <footer class="footer">
                { "Private by construction: no uploads, no analytics, no external fonts or scripts. Works offline after the first visit." }
            </footer>
        </div>
    }
}

/// Lets the worker read a File or Blob itself (crates/worker/src/engine/blob_load.rs), handed over
/// on a channel (crates/platform/src/blob_channel.rs): nothing is read or copied on the UI thread.
async fn read_in_worker(
    blob: web_sys::Blob,
    id: FileId,
    name: String,
    bridge: &UseReactorBridgeHandle<EvalWorker>,
    acks: &Acks,
) -> Result<(), String> {
    // Offered on a channel until the worker is done with it (crates/platform/src/blob_channel.rs).
    let offer = ragscope_platform::blob_channel::Offer::new(blob.clone())
        .map_err(|e| format!("{name}: could not be handed to the worker: {e}"))?;
    offer.post_at_once(&blob);
    let (tx, mut rx) = mpsc::unbounded();
    acks.borrow_mut().insert(id, tx);
    bridge.send(Request::LoadBlob {
        id,
        name,
        url: offer.name().to_string(),
    });
    // Progress arrives here until the entry is dropped (loaded, failed or removed).
    while rx.next().await.is_some() {}
    drop(offer);
    Ok(())
}

/// Sends a file to the worker one slice at a time, waiting for each slice to be parsed before
/// reading the next, so neither side ever holds the whole file.
async fn stream(
    source: FileSource,
    id: FileId,
    name: String,
    bridge: &UseReactorBridgeHandle<EvalWorker>,
    acks: &Acks,
    cancelled: &Rc<RefCell<HashSet<FileId>>>,
) -> Result<(), String> {
    let (tx, mut rx) = mpsc::unbounded();
    acks.borrow_mut().insert(id, tx);
    let size = source.size();
    bridge.send(Request::LoadStart {
        id,
        name: name.clone(),
        size,
    });
    let send = |bytes: Vec<u8>| bridge.send(Request::LoadChunk { id, bytes });
    enum Bytes {
        Blob(web_sys::Blob),
        Text(String),
        Url(String),
    }
    let bytes = match source {
        FileSource::File(f) => Bytes::Blob(f.into()),
        FileSource::Stored(_, b) => Bytes::Blob(b),
        FileSource::Text(_, t) => Bytes::Text(t),
        FileSource::Url(u) => Bytes::Url(u),
    };
    match bytes {
        Bytes::Blob(file) => {
            let mut offset = 0u64;
            while offset < size {
                if cancelled.borrow().contains(&id) {
                    return Ok(());
                }
                let end = (offset + SLICE_BYTES).min(size);
                let blob = file
                    .slice_with_f64_and_f64(offset as f64, end as f64)
                    .map_err(|_| format!("{name}: could not be read (slice {offset}..{end})"))?;
                let bytes = gloo::file::futures::read_as_bytes(&gloo::file::Blob::from(blob))
                    .await
                    .map_err(|e| format!("{name}: could not be read: {e}"))?;
                send(bytes);
                // The worker answers each slice; a closed channel means it failed or was removed.
                if rx.next().await.is_none() {
                    return Ok(());
                }
                offset = end;
            }
        }
        Bytes::Text(text) => {
            for chunk in text.into_bytes().chunks(SLICE_BYTES as usize) {
                send(chunk.to_vec());
                if rx.next().await.is_none() {
                    return Ok(());
                }
            }
        }
        Bytes::Url(url) => {
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
            send(response.binary().await.map_err(fail)?);
            if rx.next().await.is_none() {
                return Ok(());
            }
        }
    }
    if !cancelled.borrow().contains(&id) {
        bridge.send(Request::LoadEnd { id });
    }
    Ok(())
}
