//! Files the worker reads itself: the page hands the picked `File`/`Blob` over on a channel
//! (`Request::LoadBlob`, crates/platform/src/blob_channel.rs; an object URL works too), and the
//! worker reads it as a stream (`Blob.stream()`), feeding batches of about a megabyte to the same
//! streaming parsers as `LoadChunk`. No byte crosses the UI thread and none is encoded into a
//! message; memory stays bounded by one batch plus what is parsed.
//!
//! Why a stream and not `FileReaderSync` (the previous version, 16 MiB slices): the browser
//! fills the stream's pipe on threads of its own while wasm parses the batch before, so reading
//! and parsing overlap instead of adding up, and each batch is copied and parsed while it is in
//! the CPU's cache. Measured in this project's headless Chromium on the 35 MB benchmark run with
//! `node xtask/bench/read_apis/run.mjs` (a stand-in parse of 2.5 ms/MB between reads; medians
//! of 7, load 6.6): 16 MiB `FileReaderSync` slices 176 ms, the stream in 1 MiB batches 136 ms
//! (256 KiB 154, 4 MiB 169), the parse alone 89 ms. In the perf e2e test (38 MB run,
//! 12 pairs of builds alternating on the loaded 2-core machine, medians): the load in the worker
//! 241 -> 202 ms (reading 81 ms -> 58 ms of waiting, copying 16.5 -> 7.5 ms).
//!
//! A second worker that reads the stream and transfers each chunk here (so the browser's pipe
//! is drained while this worker parses) gains nothing: the same harness, two runs, 115 and
//! 125 ms against 117 and 130 ms for the stream read here.
//!
//! Why a BYOB reader where the browser has one: the default reader hands over every chunk in a
//! new `ArrayBuffer`, which the worker's own thread allocates, fills and later collects; one
//! reused buffer leaves only the copy into wasm. The perf test's flow on two builds of the app
//! (`node tests/browser/ab-builds.mjs 9 DIST_A DIST_B`, alternating, quiet 2-core machine,
//! medians of 9): waiting for the stream 56 -> 35 ms, parse 107 ms either way, the change
//! event to the row in the table 0.274 -> 0.228 s.
//!
//! Between batches the worker answers with `Progress` (at most every few frames), and every few
//! tens of milliseconds it lets its event loop run and looks at the requests that arrived:
//! `Cancel`/`Remove` of this file (or `Clear`) stop the load; any other request waits in
//! `pending` until the load ends.

use super::{split_run, Workspace};
use futures::{FutureExt, SinkExt, StreamExt};
use ragscope_eval::formats::reserve_wasm_heap;
use ragscope_protocol::{FileId, Request, Response, Timings, SLICE_BYTES};
use std::collections::VecDeque;
use wasm_bindgen::{JsCast, JsValue};
use yew_agent::reactor::ReactorScope;

type Scope = ReactorScope<Request, Response>;

/// Bytes gathered from the stream before they are parsed (Chromium's chunks are 64 KiB–2 MiB).
pub(crate) const BATCH_BYTES: usize = 1 << 20;
/// At most this much of the heap is written ahead (37 ms in Chromium in the large e2e test's
/// 290 MB load): a larger file's memory past it is first written by the parser.
const TOUCH_MAX_BYTES: usize = 64 << 20;
/// How often the page hears how far the load is.
const PROGRESS_EVERY_MS: f64 = 50.0;
/// Nor before this much of the load has passed, nor at its end (`Loaded` follows): each
/// `Progress` is a message the page decodes and a render of it, on a core the two parsing
/// workers need. The perf flow (`ab-builds.mjs`, 11 rounds) with the first after 150 ms and none
/// at the end: `Loaded` at 97 -> 90 ms after the change event, the row at 104 -> 101 ms.
const PROGRESS_FIRST_MS: f64 = 150.0;
/// How long the worker reads before letting its event loop run (to see `Cancel`).
const YIELD_EVERY_MS: f64 = 40.0;

/// `performance.timeOrigin + performance.now()` in ms: comparable across the page and the worker.
pub fn wall_ms() -> f64 {
    let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok());
    match perf {
        Some(p) => p.time_origin() + p.now(),
        None => js_sys::Date::now(),
    }
}

/// Bytes of this worker's wasm linear memory.
pub fn wasm_memory_bytes() -> u64 {
    wasm_bindgen::memory()
        .dyn_ref::<js_sys::WebAssembly::Memory>()
        .map(|m| {
            m.buffer()
                .dyn_ref::<js_sys::ArrayBuffer>()
                .map_or(0, |b| b.byte_length() as u64)
        })
        .unwrap_or(0)
}

/// The chunks of `Blob.stream()` (js_sys calls: no new web-sys features). Where the stream is
/// a byte stream (Chromium's is), a BYOB reader reads every chunk into one reused buffer of
/// [`BATCH_BYTES`]: with the default reader the browser allocates a new `ArrayBuffer` per chunk,
/// and touching and collecting those fresh pages costs the worker's thread more than the copy
/// (measured above). Elsewhere the default reader. Reading straight into wasm memory is
/// impossible: a BYOB read would detach the wasm memory's buffer.
pub struct ByteStream {
    reader: JsValue,
    read: js_sys::Function,
    /// A BYOB reader, whose `buffer` each read transfers and hands back.
    byob: bool,
    buffer: Option<js_sys::ArrayBuffer>,
}

/// A read asked of the browser and not yet received.
pub struct Requested(wasm_bindgen_futures::JsFuture);

impl ByteStream {
    /// Reads `blob`: a `Blob`, or anything with a `stream()` method that gives a
    /// `ReadableStream` of `Uint8Array`s (the tests give one that is no byte stream).
    pub fn open(blob: &JsValue) -> Result<ByteStream, String> {
        let method = |target: &JsValue, name: &str| {
            js_sys::Reflect::get(target, &name.into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .ok_or_else(|| format!("this browser has no {name}() here"))
        };
        let stream = method(blob, "stream")?
            .call0(blob)
            .map_err(|e| format!("{e:?}"))?;
        let get_reader = method(&stream, "getReader")?;
        let byob = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&byob, &"mode".into(), &"byob".into());
        // A stream that is no byte stream refuses a BYOB reader (and stays unlocked).
        let (reader, buffer) = match get_reader.call1(&stream, &byob) {
            Ok(reader) => (reader, Some(js_sys::ArrayBuffer::new(BATCH_BYTES as u32))),
            Err(_) => (
                get_reader.call0(&stream).map_err(|e| format!("{e:?}"))?,
                None,
            ),
        };
        let read = method(&reader, "read")?;
        Ok(ByteStream {
            reader,
            read,
            byob: buffer.is_some(),
            buffer,
        })
    }

    /// Whether chunks come through a BYOB reader (else the default reader).
    pub fn is_byob(&self) -> bool {
        self.byob
    }

    /// The next chunk, `None` at the end. A chunk of the BYOB reader lives in its buffer: copy
    /// it before the next call.
    pub async fn next(&mut self) -> Result<Option<js_sys::Uint8Array>, String> {
        let read = self.request()?;
        self.receive(read).await
    }

    /// Asks the browser for the next chunk now; [`receive`](Self::receive) waits for it. In
    /// between, the worker can do other work while the browser reads on threads of its own.
    pub fn request(&mut self) -> Result<Requested, String> {
        let promise = if self.byob {
            let buffer = self
                .buffer
                .take()
                .ok_or_else(|| "the stream kept its buffer after an error".to_string())?;
            self.read
                .call1(&self.reader, &js_sys::Uint8Array::new(&buffer))
        } else {
            self.read.call0(&self.reader)
        }
        .map_err(|e| format!("{e:?}"))?
        .dyn_into::<js_sys::Promise>()
        .map_err(|_| "the stream's read() gave no promise".to_string())?;
        Ok(Requested(wasm_bindgen_futures::JsFuture::from(promise)))
    }

    /// The chunk [`request`](Self::request) asked for, `None` at the end.
    pub async fn receive(
        &mut self,
        Requested(read): Requested,
    ) -> Result<Option<js_sys::Uint8Array>, String> {
        let result = read.await.map_err(|e| format!("{e:?}"))?;
        let field = |name: &str| js_sys::Reflect::get(&result, &name.into()).unwrap_or_default();
        if field("done").is_truthy() {
            return Ok(None);
        }
        let value = field("value")
            .dyn_into::<js_sys::Uint8Array>()
            .map_err(|_| "the stream gave something else than bytes".to_string())?;
        if self.byob {
            self.buffer = Some(value.buffer());
        }
        Ok(Some(value))
    }

    /// Stops the browser reading the rest (a load that ends early).
    pub fn cancel(&self) {
        if let Some(cancel) = js_sys::Reflect::get(&self.reader, &"cancel".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        {
            let _ = cancel.call0(&self.reader);
        }
    }
}

/// Chunks of a stream gathered up to [`BATCH_BYTES`] before they are parsed: small enough to
/// stay in the CPU's cache between the copy and the parse, large enough that calls into the
/// parser are few. Zeroed once (not per batch); grown only for a chunk larger than what is left.
pub(crate) struct Batch {
    buffer: Vec<u8>,
    filled: usize,
}

impl Batch {
    pub(crate) fn new() -> Batch {
        Batch {
            buffer: vec![0; 3 * BATCH_BYTES],
            filled: 0,
        }
    }

    /// Copies `view` in; whether the batch is full.
    pub(crate) fn push(&mut self, view: &js_sys::Uint8Array) -> bool {
        let end = self.filled + view.length() as usize;
        if end > self.buffer.len() {
            self.buffer.resize(end, 0);
        }
        view.copy_to(&mut self.buffer[self.filled..end]);
        self.filled = end;
        self.filled >= BATCH_BYTES
    }

    /// The gathered bytes, and the batch emptied for the next ones.
    pub(crate) fn take(&mut self) -> &[u8] {
        let filled = std::mem::take(&mut self.filled);
        &self.buffer[..filled]
    }
}

/// What the load loop saw among the requests that arrived meanwhile.
enum Seen {
    Nothing,
    Stop,
    Gone,
}

/// Lets the worker's event loop run, so that requests posted meanwhile arrive, and takes them
/// in order. `None` when the page went away.
pub(crate) async fn arrived_requests(scope: &mut Scope) -> Option<Vec<Request>> {
    gloo::timers::future::TimeoutFuture::new(0).await;
    let mut arrived = Vec::new();
    while let Some(next) = scope.next().now_or_never() {
        arrived.push(next?);
    }
    Some(arrived)
}

/// Lets the worker's event loop run (so requests arrive) and files what arrived: requests for
/// this file's end stop the load; the rest wait in `pending`.
async fn look_at_requests(scope: &mut Scope, id: FileId, pending: &mut VecDeque<Request>) -> Seen {
    let Some(arrived) = arrived_requests(scope).await else {
        return Seen::Gone;
    };
    let mut seen = Seen::Nothing;
    for request in arrived {
        match request {
            Request::Cancel { id: x } if x == id => seen = Seen::Stop,
            Request::Remove { id: x } if x == id => {
                seen = Seen::Stop;
                pending.push_back(request);
            }
            Request::Clear => {
                seen = Seen::Stop;
                pending.push_back(request);
            }
            other => pending.push_back(other),
        }
    }
    seen
}

/// Reads the file behind `url` into the workspace; what to tell the page (`Loaded` and the
/// load's timings; what went wrong was sent already). `None` when the page went away.
///
/// A large run, once qrels and measures are known, is read in two places: the helper worker
/// reads and scores the part after a topic boundary near the middle while this one reads and
/// scores the first part (crates/worker/src/engine/split_run.rs,
/// crates/worker/src/engine/shard.rs); this worker parses the whole run later (`complete_tail`).
/// Anything the cut cannot serve reads the whole file here.
pub async fn load(
    scope: &mut Scope,
    ws: &mut Workspace,
    pending: &mut VecDeque<Request>,
    id: FileId,
    name: String,
    url: String,
) -> Option<Vec<Response>> {
    let start_ms = wall_ms();
    let failed = |error: String| Response::LoadFailed {
        id,
        name: name.clone(),
        error,
    };
    let (blob, how) = match crate::engine::inference::web::blob_from_url_noting(&url).await {
        Ok(b) => b,
        Err(e) => {
            // Removed meanwhile (the page revoked the URL): nothing to say.
            return match look_at_requests(scope, id, pending).await {
                Seen::Gone => None,
                Seen::Stop => Some(vec![]),
                Seen::Nothing => {
                    let error = format!("{name}: could not be read: {e}");
                    Some(vec![failed(error)])
                }
            };
        }
    };
    let size = blob.size() as u64;
    let got_ms = wall_ms();
    let mut phases = vec![(format!("the Blob from the page ({how})"), got_ms - start_ms)];
    let split = plan_split(ws, &blob, size);
    if split.is_some() {
        phases.push(("find the cut (FileReaderSync)".into(), wall_ms() - got_ms));
    }
    // what the load in two places gave (`Some(None)`: cancelled); `None`: read the file whole
    let split_answer = match split {
        Some((plan, cut, helper)) => {
            let t_ask = wall_ms();
            let later = blob
                .slice_with_f64(cut as f64)
                .map(JsValue::from)
                .unwrap_or_default();
            let asked = helper.score_part(&later, size - cut, &plan);
            let first = blob
                .slice_with_f64_and_f64(0.0, cut as f64)
                .map(JsValue::from)
                .unwrap_or_default();
            ws.handle(Request::LoadStart {
                id,
                name: name.clone(),
                size,
            });
            ws.score_while_loading(id, &plan);
            phases.push((
                format!("cut at byte {cut}: the helper reads the rest"),
                wall_ms() - t_ask,
            ));
            // scored, not kept: the memory for the run comes with its parse after the report
            let read = stream_into(scope, ws, pending, id, &name, &first, cut, &mut phases);
            if let Err(go_on) = read.await {
                return go_on.then(Vec::new);
            }
            // this part scored while the helper goes on with the rest
            let t0 = wall_ms();
            let first = ws.score_first_part(id, &plan);
            let t1 = wall_ms();
            phases.push(("finish parse, score the part's last topics".into(), t1 - t0));
            let answer = asked.await;
            let t2 = wall_ms();
            phases.push(("wait for the helper".into(), t2 - t1));
            for (what, ms) in [
                "open (growing and writing memory if it holds its part whole)",
                "read, parse and score topic by topic",
                "score the rest",
            ]
            .iter()
            .zip(&answer.timings)
            {
                phases.push((format!("  the helper: {what}"), *ms));
            }
            let outcome = first.map(|first| match first {
                Ok(first) => ws.join_parts(id, &plan, first, answer.part),
                Err(again) => again,
            });
            phases.push(("join".into(), wall_ms() - t2));
            match outcome {
                Some(split_run::SplitOutcome::Kept(loaded)) => {
                    TAIL_BLOB.with(|t| *t.borrow_mut() = Some((id, name.clone(), blob.clone())));
                    Some(Some(loaded))
                }
                Some(split_run::SplitOutcome::Again(why)) => {
                    phases.push((format!("read again whole: {why}"), 0.0));
                    None
                }
                None => Some(None),
            }
        }
        None => {
            ws.handle(Request::LoadStart {
                id,
                name: name.clone(),
                size,
            });
            None
        }
    };
    // the file read whole, and kept (the load begun already)
    let answer = match split_answer {
        Some(answer) => answer,
        None => {
            let read = stream_into(scope, ws, pending, id, &name, &blob, size, &mut phases);
            if let Err(go_on) = read.await {
                return go_on.then(Vec::new);
            }
            finish(ws, id, &mut phases)
        }
    };
    // the helper gets the qrels too, to score later parts of runs against
    if let (Some(Response::Loaded { kind, .. }), Some(helper)) =
        (&answer, crate::engine::shard::helper())
    {
        if *kind == ragscope_protocol::FileKind::Qrels {
            helper.share_qrels(id, &blob);
        }
    }
    let end_ms = wall_ms();
    let timings = Response::Timings(Timings {
        what: format!("load {name}"),
        start_ms,
        end_ms,
        phases,
        wasm_memory_bytes: wasm_memory_bytes(),
    });
    Some(answer.into_iter().chain([timings]).collect())
}

/// About what a parsed run or qrels of `size` bytes needs (natively its peak is 1.2–1.9× the
/// file), of which a stored run's arena and results take about three quarters of the file.
fn grow_heap_for(size: u64) {
    if size > SLICE_BYTES {
        let bytes = (size + size / 2).min(u32::MAX as u64 / 2) as usize;
        reserve_wasm_heap(bytes, TOUCH_MAX_BYTES.min(size as usize / 4 * 3));
    }
}

fn finish(ws: &mut Workspace, id: FileId, phases: &mut Vec<(String, f64)>) -> Option<Response> {
    let t0 = wall_ms();
    let answer = ws.finish(id);
    phases.push(("finish parse".into(), wall_ms() - t0));
    answer
}

/// Whether to read this file in two places: the plan, the cut, and the helper.
fn plan_split(
    ws: &Workspace,
    blob: &web_sys::Blob,
    size: u64,
) -> Option<(
    split_run::SplitPlan,
    u64,
    std::rc::Rc<crate::engine::shard::Helper>,
)> {
    let helper = crate::engine::shard::helper()?;
    if size < split_run::SPLIT_MIN_BYTES {
        return None;
    }
    let head = read_sync(blob, 0, crate::detect::DETECT_BYTES as u64)?;
    let plan = ws.split_plan(size, &head, helper.qrels())?;
    // The middle: both parts are scored the same way (2026-11-24: this worker's half in 61 ms,
    // the `ab-builds.mjs` median; the helper's in 63–72 ms in four single loads). A topic of a run is rarely over a megabyte of lines;
    // past 16 MiB of one the run is read here.
    let middle = size / 2;
    let mut window = 256 << 10;
    while window <= 16 << 20 {
        let bytes = read_sync(blob, middle, middle + window)?;
        if let Some(offset) = ragscope_eval::formats::topic_boundary(&bytes) {
            return Some((plan, middle + offset as u64, helper));
        }
        if bytes.len() < window as usize {
            return None;
        }
        window *= 4;
    }
    None
}

/// Bytes `from..to` of `blob`, read at once (`FileReaderSync`: this is a worker).
fn read_sync(blob: &web_sys::Blob, from: u64, to: u64) -> Option<Vec<u8>> {
    let part = blob.slice_with_f64_and_f64(from as f64, to as f64).ok()?;
    let reader = web_sys::FileReaderSync::new().ok()?;
    let buffer = reader.read_as_array_buffer(&part).ok()?;
    Some(js_sys::Uint8Array::new(&buffer).to_vec())
}

thread_local! {
    /// The `Blob` of the run scored in two places, still to parse whole
    /// (crates/worker/src/engine/split_run.rs).
    static TAIL_BLOB: std::cell::RefCell<Option<(FileId, String, web_sys::Blob)>> =
        const { std::cell::RefCell::new(None) };
}

/// Parses the run scored in two places whole, so the workspace holds it. False when the page
/// went away.
pub async fn complete_tail(scope: &mut Scope, ws: &mut Workspace) -> bool {
    let Some(tail) = ws.tail().cloned() else {
        return true;
    };
    let Some((id, name, blob)) = TAIL_BLOB.with(|t| t.borrow_mut().take()) else {
        return true;
    };
    let start_ms = wall_ms();
    let run = if id != tail.id {
        Err("internal: another file's bytes".to_string())
    } else {
        let size = blob.size() as u64;
        let mut parser = ragscope_eval::formats::RunParser::new(&name);
        parser.expect_bytes(size as usize);
        // the heap grown while the browser opens the file, as for any load
        let read = crate::engine::shard::read_batches(
            &blob,
            || grow_heap_for(size),
            |b| parser.feed(b).map_err(|e| e.to_string()),
        );
        match read.await {
            Ok(()) => parser.finish().map_err(|e| e.to_string()),
            Err(e) => Err(e),
        }
    };
    let answer = ws.complete_tail(run);
    let timings = Response::Timings(Timings {
        what: format!("tail {name}: the run parsed whole here after the report"),
        start_ms,
        end_ms: wall_ms(),
        phases: vec![],
        wasm_memory_bytes: wasm_memory_bytes(),
    });
    for r in answer.into_iter().chain([timings]) {
        if scope.send(r).await.is_err() {
            return false;
        }
    }
    let replaced = crate::engine::shard::helper().is_some_and(|helper| helper.slim_down());
    if replaced {
        // for the page's timings (split.test.mjs waits for it)
        let now = wall_ms();
        let timings = Response::Timings(Timings {
            what: "helper replaced: its last job grew its memory past the limit".into(),
            start_ms: now,
            end_ms: now,
            phases: vec![],
            wasm_memory_bytes: wasm_memory_bytes(),
        });
        return scope.send(timings).await.is_ok();
    }
    true
}

/// Streams `blob` into the workspace's load of `id` (started already); the heap is grown first
/// for a load that keeps what it parses. `Err(go_on)` when the load ended early (an error,
/// which was sent; a cancel; the page gone: `go_on` false).
#[allow(clippy::too_many_arguments)]
async fn stream_into(
    scope: &mut Scope,
    ws: &mut Workspace,
    pending: &mut VecDeque<Request>,
    id: FileId,
    name: &str,
    blob: &JsValue,
    size: u64,
    phases: &mut Vec<(String, f64)>,
) -> Result<(), bool> {
    let failed = |error: String| Response::LoadFailed {
        id,
        name: name.to_string(),
        error,
    };
    let t_open = wall_ms();
    let mut chunks = match ByteStream::open(blob) {
        Ok(r) => r,
        Err(e) => {
            ws.handle(Request::Cancel { id });
            let sent = scope.send(failed(format!("{name}: could not be read: {e}")));
            return Err(sent.await.is_ok());
        }
    };
    // Asked for before the heap is grown and touched: the browser opens the file and reads
    // the first chunk meanwhile (20 ms of waiting in the perf test before this).
    let mut first = Some(chunks.request());
    let opened_ms = wall_ms();
    if ws.keeps_what_it_reads(id) {
        grow_heap_for(size);
    }
    let grown_ms = wall_ms();
    let (mut read_ms, mut copy_ms, mut parse_ms, mut yield_ms) = (0.0, 0.0, 0.0, 0.0);
    let mut progress_ms = 0.0;
    // the wait for the first chunk (the browser opening the file) apart from the rest
    let mut first_read_ms = None;
    let mut batch = Batch::new();
    let mut offset = 0u64;
    let mut last_yield = wall_ms();
    let mut next_progress = wall_ms() + PROGRESS_FIRST_MS;
    loop {
        let t0 = wall_ms();
        let chunk = match first.take() {
            Some(Ok(requested)) => chunks.receive(requested).await,
            Some(Err(e)) => Err(e),
            None => chunks.next().await,
        };
        let t1 = wall_ms();
        read_ms += t1 - t0;
        first_read_ms.get_or_insert(t1 - t0);
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                ws.handle(Request::Cancel { id });
                let error = format!("{name}: could not be read (after {offset} bytes): {e}");
                return Err(scope.send(failed(error)).await.is_ok());
            }
        };
        let done = chunk.is_none();
        let full = chunk.as_ref().is_some_and(|view| batch.push(view));
        let t2 = wall_ms();
        copy_ms += t2 - t1;
        if !full && !done {
            continue;
        }
        let bytes = batch.take();
        offset += bytes.len() as u64;
        let answer = ws.feed(id, bytes);
        let t3 = wall_ms();
        parse_ms += t3 - t2;
        match answer {
            Some(progress @ Response::Progress { .. }) => {
                if t3 >= next_progress && !done {
                    next_progress = t3 + PROGRESS_EVERY_MS;
                    let sent = scope.send(progress).await;
                    progress_ms += wall_ms() - t3;
                    if sent.is_err() {
                        chunks.cancel();
                        return Err(false);
                    }
                }
            }
            // A parse error: the file is dropped (and only it).
            Some(other) => {
                chunks.cancel();
                return Err(scope.send(other).await.is_ok());
            }
            // Cancelled meanwhile.
            None => {
                chunks.cancel();
                return Err(true);
            }
        }
        if done {
            break;
        }
        if t3 - last_yield >= YIELD_EVERY_MS {
            let seen = look_at_requests(scope, id, pending).await;
            yield_ms += wall_ms() - t3;
            match seen {
                Seen::Nothing => {}
                Seen::Stop => {
                    chunks.cancel();
                    ws.handle(Request::Cancel { id });
                    return Err(true);
                }
                Seen::Gone => {
                    chunks.cancel();
                    return Err(false);
                }
            }
            last_yield = wall_ms();
        }
    }
    phases.extend([
        ("open the stream".into(), opened_ms - t_open),
        (
            "grow and write wasm memory (the browser opening the file)".into(),
            grown_ms - opened_ms,
        ),
        ("read (waiting for the stream)".into(), read_ms),
        (
            "of which the first chunk".into(),
            first_read_ms.unwrap_or(0.0),
        ),
        ("copy into wasm".into(), copy_ms),
        ("parse".into(), parse_ms),
        ("the event loop (requests, messages)".into(), yield_ms),
        ("progress sent to the page".into(), progress_ms),
        ("(the read of this part in all)".into(), wall_ms() - t_open),
    ]);
    Ok(())
}
