//! Files the worker reads itself: the page hands the picked `File`/`Blob` over on a channel
//! (`Request::LoadBlob`, src/blob_channel.rs; an object URL works too), and the worker reads it in slices with `FileReaderSync`, feeding each
//! slice to the same streaming parsers as `LoadChunk`. No byte crosses the UI thread and none is
//! encoded into a message; memory stays bounded by one slice plus what is parsed.
//!
//! Between slices the worker answers with `Progress`, and every few tens of milliseconds it lets
//! its event loop run and looks at the requests that arrived: `Cancel`/`Remove` of this file (or
//! `Clear`) stop the load; any other request waits in `pending` until the load ends.

use super::Workspace;
use crate::protocol::{FileId, Request, Response, Timings, SLICE_BYTES};
use futures::{FutureExt, SinkExt, StreamExt};
use std::collections::VecDeque;
use wasm_bindgen::JsCast;
use yew_agent::reactor::ReactorScope;

type Scope = ReactorScope<Request, Response>;

/// Slices read per `FileReaderSync` call: larger than the page's (the worker may block), small
/// enough that a `Cancel` is seen within a few tens of milliseconds.
const WORKER_SLICE_BYTES: u64 = 4 * SLICE_BYTES;
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

/// Grows the wasm heap once to about `bytes` (one `memory.grow` instead of one per doubling of
/// the parsers' vectors): the allocator keeps the freed block and serves the parser from it.
/// Pages grown but never written cost no physical memory. (Same trick as crates/js.)
fn reserve_heap(bytes: usize) {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(bytes)));
}

/// What the load loop saw among the requests that arrived meanwhile.
enum Seen {
    Nothing,
    Stop,
    Gone,
}

/// Lets the worker's event loop run (so requests arrive) and files what arrived: requests for
/// this file's end stop the load; the rest wait in `pending`.
async fn look_at_requests(scope: &mut Scope, id: FileId, pending: &mut VecDeque<Request>) -> Seen {
    gloo::timers::future::TimeoutFuture::new(0).await;
    let mut seen = Seen::Nothing;
    while let Some(next) = scope.next().now_or_never() {
        let Some(request) = next else {
            return Seen::Gone;
        };
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

/// Reads the file behind `url` into the workspace. False when the page went away.
pub async fn load(
    scope: &mut Scope,
    ws: &mut Workspace,
    pending: &mut VecDeque<Request>,
    id: FileId,
    name: String,
    url: String,
) -> bool {
    let start_ms = wall_ms();
    let failed = |error: String| Response::LoadFailed {
        id,
        name: name.clone(),
        error,
    };
    let blob = match url.strip_prefix(crate::blob_channel::PREFIX) {
        Some(channel) => crate::blob_channel::receive(channel).await,
        None => crate::engine::inference::web::blob_from_url(&url).await,
    };
    let blob = match blob {
        Ok(b) => b,
        Err(e) => {
            // Removed meanwhile (the page revoked the URL): nothing to say.
            return match look_at_requests(scope, id, pending).await {
                Seen::Gone => false,
                Seen::Stop => true,
                Seen::Nothing => {
                    let error = format!("{name}: could not be read: {e}");
                    scope.send(failed(error)).await.is_ok()
                }
            };
        }
    };
    let reader = match web_sys::FileReaderSync::new() {
        Ok(r) => r,
        Err(e) => {
            return scope
                .send(failed(format!("{name}: could not be read: {e:?}")))
                .await
                .is_ok()
        }
    };
    let size = blob.size() as u64;
    let opened_ms = wall_ms();
    // About what a parsed run or qrels needs (natively its peak is 1.2–1.9× the file).
    if size > SLICE_BYTES {
        reserve_heap((size + size / 2).min(u32::MAX as u64 / 2) as usize);
    }
    let grown_ms = wall_ms();
    ws.handle(Request::LoadStart {
        id,
        name: name.clone(),
        size,
    });
    let (mut read_ms, mut copy_ms, mut parse_ms) = (0.0, 0.0, 0.0);
    let mut buffer: Vec<u8> = Vec::new();
    let mut offset = 0u64;
    let mut last_yield = wall_ms();
    while offset < size {
        let end = (offset + WORKER_SLICE_BYTES).min(size);
        let t0 = wall_ms();
        let bytes = blob
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .and_then(|slice| reader.read_as_array_buffer(&slice));
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => {
                ws.handle(Request::Cancel { id });
                let error = format!("{name}: could not be read (bytes {offset}..{end}): {e:?}");
                return scope.send(failed(error)).await.is_ok();
            }
        };
        let t1 = wall_ms();
        let view = js_sys::Uint8Array::new(&bytes);
        buffer.resize(view.length() as usize, 0);
        view.copy_to(&mut buffer);
        let t2 = wall_ms();
        let answer = ws.feed(id, &buffer);
        let t3 = wall_ms();
        read_ms += t1 - t0;
        copy_ms += t2 - t1;
        parse_ms += t3 - t2;
        offset = end;
        match answer {
            Some(progress @ Response::Progress { .. }) => {
                if scope.send(progress).await.is_err() {
                    return false;
                }
            }
            // A parse error: the file is dropped (and only it).
            Some(other) => return scope.send(other).await.is_ok(),
            // Cancelled meanwhile.
            None => return true,
        }
        if t3 - last_yield >= YIELD_EVERY_MS && offset < size {
            match look_at_requests(scope, id, pending).await {
                Seen::Nothing => {}
                Seen::Stop => {
                    ws.handle(Request::Cancel { id });
                    return true;
                }
                Seen::Gone => return false,
            }
            last_yield = wall_ms();
        }
    }
    drop(buffer);
    let t0 = wall_ms();
    let answer = ws.finish(id);
    let finish_ms = wall_ms() - t0;
    let end_ms = wall_ms();
    let timings = Response::Timings(Timings {
        what: format!("load {name}"),
        start_ms,
        end_ms,
        phases: vec![
            ("open (the Blob from the page)".into(), opened_ms - start_ms),
            ("grow wasm memory".into(), grown_ms - opened_ms),
            ("read (FileReaderSync)".into(), read_ms),
            ("copy into wasm".into(), copy_ms),
            ("parse".into(), parse_ms),
            ("finish parse".into(), finish_ms),
        ],
        wasm_memory_bytes: wasm_memory_bytes(),
    });
    for r in answer.into_iter().chain([timings]) {
        if scope.send(r).await.is_err() {
            return false;
        }
    }
    true
}
