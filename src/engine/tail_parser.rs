//! The parse helper: a second, small worker (src/bin/parse_helper.rs) that parses the tail of a
//! large run while the evaluation worker parses its head, as the CLI parses the two halves of
//! a run on two threads (`RunParser::feed_split`). Wasm threads would need shared memory, which
//! browsers give only to cross-origin-isolated pages (headers a static site cannot always
//! set), so the helper has memory of its own: it reads its part of the `Blob` itself, parses it
//! and sends the parsed results back as bytes (`RunParser::finish_part`, one transferred
//! `ArrayBuffer`), which the evaluation worker appends (`absorb_part`).
//!
//! Messages, plain JS objects: the helper says `{ready: true}` once it listens; the worker sends
//! `{job, blob, name}`; the helper answers `{job, part}` or `{job, error}`.
//!
//! The helper is started with the first file the page hands over, so it is ready for the next
//! one. A helper that parsed a tail is ended (wasm memory never shrinks, and it grew to hold half
//! a run) and a fresh one started for the next file.

use futures::channel::mpsc;
use futures::StreamExt;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// What the helper said.
enum Reply {
    Ready,
    Part(u32, Part),
    Failed(u32, String),
    /// The worker could not start or stopped with an error.
    Broken(String),
}

thread_local! {
    /// The helper waiting for the next file.
    static IDLE: RefCell<Option<TailWorker>> = const { RefCell::new(None) };
}

/// The helper's parsed tail, and where its time went.
pub struct Part {
    pub bytes: js_sys::Uint8Array,
    /// (phase, ms), as [`crate::protocol::Timings`] lists them.
    pub phases: Vec<(String, f64)>,
}

/// The helper's phases, in the order it sends their times.
const HELPER_PHASES: [&str; 4] = [
    "tail's worker, read (waiting for the stream)",
    "tail's worker, copy into wasm",
    "tail's worker, parse",
    "tail's worker, write its part",
];

/// The evaluation worker's handle on a parse helper; ending it (drop) terminates the helper.
pub struct TailWorker {
    worker: web_sys::Worker,
    replies: mpsc::UnboundedReceiver<Reply>,
    ready: bool,
    broken: bool,
    next_job: u32,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for TailWorker {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

fn field(target: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(target, &name.into()).unwrap_or_default()
}

impl TailWorker {
    /// The idle helper, or a new one started from `script` (the helper's JS, an absolute URL);
    /// `None` without a script (nothing to start) or when it cannot be started.
    pub fn take(script: Option<&str>) -> Option<TailWorker> {
        let script = script?;
        if let Some(idle) = IDLE.with(|slot| slot.borrow_mut().take()) {
            return Some(idle);
        }
        match TailWorker::spawn(script) {
            Ok(w) => Some(w),
            Err(e) => {
                gloo::console::warn!(format!("the parse helper could not start: {e}"));
                None
            }
        }
    }

    /// Keeps a helper that parsed nothing for the next file.
    pub fn put_back(worker: Option<TailWorker>) {
        if let Some(w) = worker.filter(|w| !w.broken) {
            IDLE.with(|slot| *slot.borrow_mut() = Some(w));
        }
    }

    /// Ends a helper that parsed a tail (its memory grew) and starts a fresh one for the next
    /// file, so that it is ready by then.
    pub fn used(worker: Option<TailWorker>, script: Option<&str>) {
        drop(worker);
        let _ = script;
    }

    fn spawn(script: &str) -> Result<TailWorker, String> {
        // As gloo-worker starts the evaluation worker: a loader that imports wasm-bindgen's
        // script and starts it with its wasm (the `no-modules` output does not start itself).
        let wasm = script
            .strip_suffix(".js")
            .map(|s| format!("{s}_bg.wasm"))
            .ok_or_else(|| format!("{script} is not a .js file"))?;
        let loader = format!("importScripts({script:?});wasm_bindgen({wasm:?});");
        let parts = js_sys::Array::of1(&loader.into());
        let options = web_sys::BlobPropertyBag::new();
        options.set_type("application/javascript");
        let js = |e: JsValue| format!("{e:?}");
        let blob =
            web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(js)?;
        let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js)?;
        let worker = web_sys::Worker::new(&url);
        web_sys::Url::revoke_object_url(&url).map_err(js)?;
        let worker = worker.map_err(js)?;
        let (tx, replies) = mpsc::unbounded();
        let on_message = {
            let tx = tx.clone();
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                let data = e.data();
                let job = field(&data, "job").as_f64().map(|j| j as u32);
                let reply = match job {
                    None if field(&data, "ready").is_truthy() => Reply::Ready,
                    None => Reply::Broken("the parse helper sent something unknown".into()),
                    Some(job) => match field(&data, "part").dyn_into::<js_sys::ArrayBuffer>() {
                        Ok(buffer) => {
                            let ms = js_sys::Array::from(&field(&data, "ms"));
                            let phases = HELPER_PHASES
                                .iter()
                                .enumerate()
                                .map(|(i, p)| {
                                    (p.to_string(), ms.get(i as u32).as_f64().unwrap_or(0.0))
                                })
                                .collect();
                            let bytes = js_sys::Uint8Array::new(&buffer);
                            Reply::Part(job, Part { bytes, phases })
                        }
                        Err(_) => Reply::Failed(
                            job,
                            field(&data, "error")
                                .as_string()
                                .unwrap_or_else(|| "no reason given".into()),
                        ),
                    },
                };
                let _ = tx.unbounded_send(reply);
            })
        };
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            let message = field(&e, "message")
                .as_string()
                .unwrap_or_else(|| "it stopped".into());
            let _ = tx.unbounded_send(Reply::Broken(message));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(TailWorker {
            worker,
            replies,
            ready: false,
            broken: false,
            next_job: 0,
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    /// Whether the helper listens (it may still be starting).
    pub fn is_ready(&mut self) -> bool {
        while let Ok(reply) = self.replies.try_recv() {
            match reply {
                Reply::Ready => self.ready = true,
                Reply::Broken(e) => self.broke(&e),
                // a reply to a job of a load that ended early
                Reply::Part(..) | Reply::Failed(..) => {}
            }
        }
        self.ready && !self.broken
    }

    fn broke(&mut self, why: &str) {
        if !self.broken {
            gloo::console::warn!(format!("the parse helper failed: {why}"));
        }
        self.broken = true;
    }

    /// Hands `tail` (a Blob that starts at a line start) to the helper; the job's number.
    pub fn start(&mut self, tail: &web_sys::Blob, name: &str) -> Option<u32> {
        self.next_job = self.next_job.wrapping_add(1);
        let message = js_sys::Object::new();
        let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&message, &k.into(), v).is_ok();
        let sent = set("job", &f64::from(self.next_job).into())
            && set("blob", tail)
            && set("name", &name.into())
            && self.worker.post_message(&message).is_ok();
        sent.then_some(self.next_job)
    }

    /// The helper's part for `job`, or why there is none; `None` when `within_ms` passed first.
    pub async fn reply_within(&mut self, job: u32, within_ms: f64) -> Option<Result<Part, String>> {
        let timeout = gloo::timers::future::TimeoutFuture::new(within_ms as u32);
        let mut timeout = std::pin::pin!(timeout);
        loop {
            let next = futures::future::select(self.replies.next(), timeout.as_mut()).await;
            let reply = match next {
                futures::future::Either::Left((reply, _)) => reply,
                futures::future::Either::Right(_) => return None,
            };
            match reply {
                Some(Reply::Part(j, part)) if j == job => return Some(Ok(part)),
                Some(Reply::Failed(j, why)) if j == job => return Some(Err(why)),
                Some(Reply::Broken(why)) => {
                    self.broke(&why);
                    return Some(Err(why));
                }
                None => return Some(Err("the parse helper is gone".into())),
                Some(_) => {}
            }
        }
    }
}

/// The first line start at or after `from` (the byte after a newline), within 1 MiB of it;
/// `None` when there is none (a line that long, or the file's end).
pub async fn line_start_after(blob: &web_sys::Blob, from: u64) -> Option<u64> {
    let size = blob.size() as u64;
    let end = size.min(from + (1 << 20));
    let slice = blob.slice_with_f64_and_f64(from as f64, end as f64).ok()?;
    let buffer = wasm_bindgen_futures::JsFuture::from(slice.array_buffer())
        .await
        .ok()?;
    let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
    let newline = bytes.iter().position(|&b| b == b'\n')?;
    let cut = from + newline as u64 + 1;
    (cut < size).then_some(cut)
}

/// The helper worker's side (src/bin/parse_helper.rs): answers each job with its part.
pub fn helper_main() {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(|e: web_sys::MessageEvent| {
            let data = e.data();
            let job = field(&data, "job");
            let name = field(&data, "name").as_string().unwrap_or_default();
            let blob = field(&data, "blob").dyn_into::<web_sys::Blob>();
            wasm_bindgen_futures::spawn_local(async move {
                let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
                let reply = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&reply, &"job".into(), &job);
                let result = match blob {
                    Ok(blob) => parse_tail(&blob, &name).await,
                    Err(_) => Err("no Blob in the message".to_string()),
                };
                let sent = match result {
                    Ok((part, ms)) => {
                        let ms = ms
                            .iter()
                            .map(|&m| JsValue::from(m))
                            .collect::<js_sys::Array>();
                        let _ = js_sys::Reflect::set(&reply, &"ms".into(), &ms);
                        let _ = js_sys::Reflect::set(&reply, &"part".into(), &part);
                        scope.post_message_with_transfer(&reply, &js_sys::Array::of1(&part))
                    }
                    Err(error) => {
                        let _ = js_sys::Reflect::set(&reply, &"error".into(), &error.into());
                        scope.post_message(&reply)
                    }
                };
                if sent.is_err() {
                    gloo::console::warn!("the parse helper could not answer");
                }
            });
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // listens for the worker's whole life
    on_message.forget();
    // A fresh helper's code runs in V8's baseline tier until it is hot: parse a generated run
    // first (as the evaluation worker does), then say it is ready.
    super::warm_up::warm_up_run_parts();
    let ready = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&ready, &"ready".into(), &true.into());
    let _ = scope.post_message(&ready);
}

/// Parses `tail` as the rest of a run; its results as part bytes (the error of a tail that does
/// not parse is only said: the evaluation worker then reads the tail itself, with the line
/// numbers of the whole file).
async fn parse_tail(
    tail: &web_sys::Blob,
    name: &str,
) -> Result<(js_sys::ArrayBuffer, [f64; 4]), String> {
    use super::blob_load::{reserve_heap, wall_ms, Batches};
    let size = tail.size() as usize;
    reserve_heap(size + size / 2);
    let mut parser = ragscope_eval::formats::RunParser::new(name);
    parser.expect_bytes(size);
    let mut batches = Batches::open(tail)?;
    let mut parse_ms = 0.0;
    while let Some(batch) = batches.next().await? {
        let t = wall_ms();
        parser.feed(batch).map_err(|e| e.to_string())?;
        parse_ms += wall_ms() - t;
    }
    let t = wall_ms();
    let part = parser.finish_part().map_err(|e| e.to_string())?;
    let out = js_sys::Uint8Array::new_with_length(
        u32::try_from(part.len()).map_err(|_| "the part is larger than 4 GiB".to_string())?,
    );
    // Straight into the message's buffer, piece by piece; small pieces (lengths, qids) are
    // gathered first so that the JS calls are few.
    let (mut at, mut small) = (0u32, Vec::with_capacity(1 << 16));
    let copy = |bytes: &[u8], at: &mut u32| {
        let end = *at + bytes.len() as u32;
        out.subarray(*at, end).copy_from(bytes);
        *at = end;
    };
    part.write(&mut |piece| {
        if piece.len() < 4096 {
            small.extend_from_slice(piece);
            if small.len() < (1 << 16) - 4096 {
                return;
            }
        } else if !small.is_empty() {
            copy(&small, &mut at);
            small.clear();
        }
        if piece.len() < 4096 {
            copy(&small, &mut at);
            small.clear();
        } else {
            copy(piece, &mut at);
        }
    });
    copy(&small, &mut at);
    let ms = [batches.read_ms, batches.copy_ms, parse_ms, wall_ms() - t];
    Ok((out.buffer(), ms))
}
