//! The helper worker that reads the later part of a large run while the evaluation worker
//! reads the first (crates/worker/src/engine/split_run.rs): a second instance of this same worker
//! script, started by the evaluation worker itself (a nested dedicated worker, named [`NAME`]), so
//! the page knows nothing of it. It holds a copy of the qrels (parsed from the same `Blob` when
//! they were loaded) and answers one request: parse this `Blob` as a run and score it with
//! these measures. Messages are plain JS arrays (a `Blob` crosses without a copy); the
//! scores come back as one `Float64Array` per measure.
//!
//! Why a second worker and not threads: wasm threads need `SharedArrayBuffer`, hence a
//! cross-origin-isolated page (COOP/COEP headers a static host may not send) and a
//! nightly-built standard library. Two workers need neither: each parses its own bytes from
//! the `File`, and only the (small) per-topic scores cross.

use super::blob_load::{wall_ms, Batch, ByteStream};
use super::split_run::{PartScorer, PartScores, SplitPlan};
use futures::channel::{mpsc, oneshot};
use futures::StreamExt;
use ragscope_eval::formats::reserve_wasm_heap;
use ragscope_eval::formats::{Qrels, QrelsParser, RunParser};
use ragscope_protocol::FileId;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The helper's worker name, which tells the script to serve as the helper.
pub const NAME: &str = "ragscope-helper";

/// A job that grew the helper's wasm memory by more than this has it replaced by a fresh one
/// once the worker has parsed the tail (when the machine is idle again): wasm memory never
/// shrinks, and a part held whole (topics that interleave) would otherwise stay reserved in
/// the tab. Growth, not size: what it holds at rest (the qrels) a fresh helper holds again. A
/// fresh helper costs its instantiation, its warm-up and the qrels' parse again (not measured).
const RESTART_AFTER_GROWTH_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

/// Whether this worker was started as the helper.
pub fn is_helper() -> bool {
    js_sys::Reflect::get(&js_sys::global(), &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .as_deref()
        == Some(NAME)
}

fn array(items: &[JsValue]) -> js_sys::Array {
    items.iter().collect()
}

fn post(target: &JsValue, message: &JsValue) -> Result<(), String> {
    let post = js_sys::Reflect::get(target, &"postMessage".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or("no postMessage")?;
    post.call1(target, message)
        .map(|_| ())
        .map_err(|e| format!("{e:?}"))
}

/// Feeds the bytes of `blob` to `feed` in batches (of about a megabyte); `meanwhile` runs
/// once the first chunk is asked for, while the browser opens the file.
pub(crate) async fn read_batches(
    blob: &JsValue,
    meanwhile: impl FnOnce(),
    mut feed: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let mut stream = ByteStream::open(blob)?;
    let mut first = Some(stream.request()?);
    meanwhile();
    let mut batch = Batch::new();
    loop {
        let chunk = match first.take() {
            Some(requested) => stream.receive(requested).await?,
            None => stream.next().await?,
        };
        let done = chunk.is_none();
        let full = chunk.as_ref().is_some_and(|view| batch.push(view));
        if full || done {
            if let Err(e) = feed(batch.take()) {
                stream.cancel();
                return Err(e);
            }
        }
        if done {
            return Ok(());
        }
    }
}

// ---- in the helper ----

/// Serves as the helper: called by the worker script's `main` when [`is_helper`].
pub fn serve() {
    let (tx, mut rx) = mpsc::unbounded::<JsValue>();
    let onmessage = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let data = js_sys::Reflect::get(&event, &"data".into()).unwrap_or_default();
        let _ = tx.unbounded_send(data);
    });
    let global = js_sys::global();
    let _ = js_sys::Reflect::set(&global, &"onmessage".into(), onmessage.as_ref());
    onmessage.forget();
    // A worker drops messages that arrive before its wasm set `onmessage`: the evaluation
    // worker holds them until this.
    let _ = post(&global, &array(&["ready".into()]).into());
    wasm_bindgen_futures::spawn_local(async move {
        // the parsers' and measures' hot loops compiled by V8's optimising tier before a job
        super::warm_up::once();
        let mut qrels: Option<(FileId, Result<Qrels, String>)> = None;
        while let Some(message) = rx.next().await {
            let message: js_sys::Array = message.unchecked_into();
            let id = message.get(1).as_f64().unwrap_or(-1.0);
            match message.get(0).as_string().as_deref() {
                Some("qrels") => {
                    let blob = message.get(2);
                    let mut parser = QrelsParser::new("qrels");
                    let read =
                        read_batches(&blob, || (), |b| parser.feed(b).map_err(|e| e.to_string()))
                            .await
                            .and_then(|()| parser.finish().map_err(|e| e.to_string()));
                    qrels = Some((id as FileId, read));
                }
                Some("score") => {
                    let answer = score(&qrels, &message).await;
                    let reply = match answer {
                        Ok(v) => array(&["done".into(), id.into(), v]),
                        Err(e) => array(&["failed".into(), id.into(), e.into()]),
                    };
                    let _ = post(&global, &reply);
                }
                _ => {}
            }
        }
    });
}

/// `["score", job, blob, qrels id, measures, size]`: the part's topics and scores.
async fn score(
    qrels: &Option<(FileId, Result<Qrels, String>)>,
    message: &js_sys::Array,
) -> Result<JsValue, String> {
    let start = wall_ms();
    let plan = SplitPlan {
        qrels: message.get(3).as_f64().unwrap_or(-1.0) as FileId,
        measures: js_sys::Array::from(&message.get(4))
            .iter()
            .filter_map(|m| m.as_string())
            .collect(),
    };
    let qrels = match qrels {
        Some((id, Ok(q))) if *id == plan.qrels => q,
        Some((id, Err(e))) if *id == plan.qrels => return Err(format!("its qrels: {e}")),
        _ => return Err(format!("it does not hold qrels {}", plan.qrels)),
    };
    let measures = plan
        .measures
        .iter()
        .map(|m| m.parse::<ragscope_eval::Measure>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let blob = message.get(2);
    let size = message.get(5).as_f64().unwrap_or(0.0) as usize;
    let memory_before = super::blob_load::wasm_memory_bytes() as f64;
    let grown_by = || super::blob_load::wasm_memory_bytes() as f64 - memory_before;
    if let Some((part, timings)) = score_as_parsed(qrels, &measures, &blob, start).await? {
        return Ok(to_js(&part, &timings, grown_by()));
    }
    // Its topics interleave (one came back after it was scored): read again and held whole.
    let again = wall_ms();
    let mut parser = RunParser::new("run");
    parser.expect_bytes(size);
    let mut grown = again;
    let grow = || {
        reserve_wasm_heap(size + size / 2, (size / 4 * 3).min(64 << 20));
        grown = wall_ms();
    };
    read_batches(&blob, grow, |b| parser.feed(b).map_err(|e| e.to_string())).await?;
    let run = parser.finish().map_err(|e| e.to_string())?;
    let parsed = wall_ms();
    let results = ragscope_eval::evaluate(qrels, &run, &measures);
    let part = PartScores::of(&run, results);
    let scored = wall_ms();
    drop(run);
    let timings = [grown - start, parsed - grown, scored - parsed];
    Ok(to_js(&part, &timings, grown_by()))
}

/// The part scored topic by topic as it is parsed ([`PartScorer`]); `None` when a topic came
/// back after it was scored.
async fn score_as_parsed(
    qrels: &Qrels,
    measures: &[ragscope_eval::Measure],
    blob: &JsValue,
    start: f64,
) -> Result<Option<(PartScores, [f64; 3])>, String> {
    let opts = ragscope_eval::EvalOptions::default();
    let mut scorer = PartScorer::new("run", qrels, measures, &opts);
    let (mut opened, mut interleaved) = (start, false);
    let fed = read_batches(
        blob,
        || opened = wall_ms(),
        |b| match scorer.feed(qrels, b)? {
            true => Ok(()),
            false => {
                interleaved = true;
                Err(String::new()) // stops the read; not reported
            }
        },
    )
    .await;
    if interleaved {
        return Ok(None);
    }
    fed?;
    let parsed = wall_ms();
    let part = scorer.finish(qrels)?;
    let timings = [opened - start, parsed - opened, wall_ms() - parsed];
    Ok(Some((part, timings)))
}

fn strings(items: &[String]) -> JsValue {
    items
        .iter()
        .map(|s| JsValue::from_str(s))
        .collect::<js_sys::Array>()
        .into()
}

/// `grown`: the bytes of wasm memory the job added.
fn to_js(part: &PartScores, timings: &[f64], grown: f64) -> JsValue {
    let values: js_sys::Array = part
        .values
        .iter()
        .map(|v| JsValue::from(js_sys::Float64Array::from(&v[..])))
        .collect();
    let unjudged: Vec<f64> = part.unjudged.iter().map(|&u| u as f64).collect();
    array(&[
        strings(&part.qids),
        (part.num_results as f64).into(),
        part.run_id.as_str().into(),
        strings(&part.topics),
        values.into(),
        js_sys::Float64Array::from(&unjudged[..]).into(),
        js_sys::Float64Array::from(timings).into(),
        grown.into(),
    ])
    .into()
}

// ---- in the evaluation worker ----

/// The helper's answer as the evaluation worker reads it.
pub struct Answer {
    pub part: Result<PartScores, String>,
    /// Milliseconds the helper spent opening and growing its memory (while the browser opens
    /// the file), reading and parsing, and scoring.
    pub timings: Vec<f64>,
}

fn from_js(v: &JsValue) -> Result<(PartScores, Vec<f64>, f64), String> {
    let a: &js_sys::Array = v.dyn_ref().ok_or("not an array")?;
    let strings = |v: JsValue| -> Vec<String> {
        js_sys::Array::from(&v)
            .iter()
            .filter_map(|s| s.as_string())
            .collect()
    };
    let floats = |v: JsValue| -> Result<Vec<f64>, String> {
        v.dyn_into::<js_sys::Float64Array>()
            .map(|f| f.to_vec())
            .map_err(|_| "not numbers".to_string())
    };
    let values = js_sys::Array::from(&a.get(4))
        .iter()
        .map(floats)
        .collect::<Result<Vec<_>, _>>()?;
    let part = PartScores {
        qids: strings(a.get(0)),
        num_results: a.get(1).as_f64().ok_or("no count")? as usize,
        run_id: a.get(2).as_string().ok_or("no run id")?,
        topics: strings(a.get(3)),
        values,
        unjudged: floats(a.get(5))?.into_iter().map(|u| u as usize).collect(),
    };
    Ok((part, floats(a.get(6))?, a.get(7).as_f64().unwrap_or(0.0)))
}

/// The evaluation worker's handle on its helper.
pub struct Helper {
    script_url: String,
    link: RefCell<Rc<Link>>,
    waiting: Rc<RefCell<HashMap<u32, oneshot::Sender<JsValue>>>>,
    next_job: Cell<u32>,
    /// The qrels shared with it, and their `Blob` (to share again with a fresh helper).
    qrels: RefCell<Option<(FileId, JsValue)>>,
    /// It holds much memory since its last job: replace it when the worker is idle.
    swollen: Cell<bool>,
}

type OnMessage = Closure<dyn FnMut(JsValue)>;

/// One helper worker, and the messages posted before it said it was ready.
struct Link {
    worker: web_sys::Worker,
    ready: Cell<bool>,
    queue: RefCell<Vec<JsValue>>,
    _onmessage: RefCell<Option<OnMessage>>,
}

impl Link {
    fn post(&self, message: JsValue) -> Result<(), String> {
        if self.ready.get() {
            post(self.worker.as_ref(), &message)
        } else {
            self.queue.borrow_mut().push(message);
            Ok(())
        }
    }
}

thread_local! {
    static HELPER: RefCell<Option<Rc<Helper>>> = const { RefCell::new(None) };
}

/// The helper, if one was started.
pub fn helper() -> Option<Rc<Helper>> {
    HELPER.with(|h| h.borrow().clone())
}

/// Starts the helper from the worker script at `script_url` (the page's `worker.js`, which
/// the page names in `Request::Helper`). Without nested workers, nothing is started and every
/// run is read here alone.
pub fn start(script_url: &str) {
    if helper().is_some() {
        return;
    }
    let waiting: Rc<RefCell<HashMap<u32, oneshot::Sender<JsValue>>>> = Rc::default();
    let Ok(link) = spawn(script_url, &waiting) else {
        return;
    };
    let helper = Helper {
        script_url: script_url.to_string(),
        link: RefCell::new(link),
        waiting,
        next_job: Cell::new(0),
        qrels: RefCell::new(None),
        swollen: Cell::new(false),
    };
    HELPER.with(|h| *h.borrow_mut() = Some(Rc::new(helper)));
}

fn spawn(
    script_url: &str,
    waiting: &Rc<RefCell<HashMap<u32, oneshot::Sender<JsValue>>>>,
) -> Result<Rc<Link>, JsValue> {
    // as gloo-worker starts the evaluation worker: a classic script that loads the
    // wasm-bindgen shim and its module (both from this origin)
    let wasm_url = script_url.replace(".js", "_bg.wasm");
    let loader = format!(r#"importScripts("{script_url}");wasm_bindgen("{wasm_url}");"#);
    let parts: js_sys::Array = [JsValue::from(loader)].iter().collect();
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("application/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let worker_options = web_sys::WorkerOptions::new();
    worker_options.set_name(NAME);
    let worker = web_sys::Worker::new_with_options(&url, &worker_options)?;
    let link = Rc::new(Link {
        worker: worker.clone(),
        ready: Cell::new(false),
        queue: RefCell::new(Vec::new()),
        _onmessage: RefCell::new(None),
    });
    let waiting = waiting.clone();
    // the closure holds the link weakly: a terminated helper's link is dropped with it
    let weak = Rc::downgrade(&link);
    let onmessage = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let data = js_sys::Reflect::get(&event, &"data".into()).unwrap_or_default();
        let reply: js_sys::Array = data.unchecked_into();
        if reply.get(0).as_string().as_deref() == Some("ready") {
            if let Some(link) = weak.upgrade() {
                link.ready.set(true);
                for message in link.queue.take() {
                    let _ = post(link.worker.as_ref(), &message);
                }
            }
            return;
        }
        let job = reply.get(1).as_f64().unwrap_or(-1.0) as u32;
        if let Some(tx) = waiting.borrow_mut().remove(&job) {
            let _ = tx.send(reply.into());
        }
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    *link._onmessage.borrow_mut() = Some(onmessage);
    Ok(link)
}

impl Helper {
    /// The qrels the helper holds (or is parsing: it reads messages in order).
    pub fn qrels(&self) -> Option<FileId> {
        self.qrels.borrow().as_ref().map(|(id, _)| *id)
    }

    /// Hands the helper the loaded qrels' `Blob`, to parse now (on its own core, while the
    /// page shows the qrels).
    pub fn share_qrels(&self, id: FileId, blob: &JsValue) {
        let message = array(&["qrels".into(), id.into(), blob.clone()]);
        if self.link.borrow().post(message.into()).is_ok() {
            *self.qrels.borrow_mut() = Some((id, blob.clone()));
        }
    }

    /// Asks the helper to parse `part` (a `Blob` of `size` bytes) as a run and score it as
    /// `plan` says; the answer comes when the returned future is awaited.
    fn ask(
        &self,
        part: &JsValue,
        size: u64,
        plan: &SplitPlan,
    ) -> impl std::future::Future<Output = Result<(PartScores, Vec<f64>, f64), String>> {
        let job = self.next_job.get();
        self.next_job.set(job.wrapping_add(1));
        let (tx, rx) = oneshot::channel();
        self.waiting.borrow_mut().insert(job, tx);
        let message = array(&[
            "score".into(),
            job.into(),
            part.clone(),
            plan.qrels.into(),
            strings(&plan.measures),
            (size as f64).into(),
        ]);
        let posted = self.link.borrow().post(message.into());
        async move {
            posted?;
            let reply: js_sys::Array = rx
                .await
                .map_err(|_| "it went away".to_string())?
                .unchecked_into();
            match reply.get(0).as_string().as_deref() {
                Some("done") => from_js(&reply.get(2)),
                _ => Err(reply.get(2).as_string().unwrap_or_default()),
            }
        }
    }
}

impl Helper {
    /// [`ask`](Self::ask) (asked now); notes whether the job grew the helper's memory much.
    pub fn score_part(
        self: &Rc<Self>,
        part: &JsValue,
        size: u64,
        plan: &SplitPlan,
    ) -> impl std::future::Future<Output = Answer> {
        let asked = self.ask(part, size, plan);
        let me = self.clone();
        async move {
            match asked.await {
                Ok((part, timings, grown)) => {
                    me.swollen.set(grown > RESTART_AFTER_GROWTH_BYTES);
                    Answer {
                        part: Ok(part),
                        timings,
                    }
                }
                Err(e) => Answer {
                    part: Err(e),
                    timings: Vec::new(),
                },
            }
        }
    }

    /// A fresh helper in place of one that holds much memory since its last job; whether it
    /// was replaced.
    pub fn slim_down(&self) -> bool {
        self.swollen.replace(false) && self.restart()
    }

    /// Replaces the helper's worker by a fresh one (its memory returned to the browser),
    /// sharing the qrels with it again.
    fn restart(&self) -> bool {
        let Ok(link) = spawn(&self.script_url, &self.waiting) else {
            return false;
        };
        let old = self.link.replace(link);
        old.worker.terminate();
        let qrels = self.qrels.borrow_mut().take();
        if let Some((id, blob)) = qrels {
            self.share_qrels(id, &blob);
        }
        true
    }
}
