//! Hands a `Blob` (a picked file) from the page to the worker without copying its bytes: a
//! `BroadcastChannel` with a random name, which structured-clones the Blob (a handle on the
//! same data). The worker joins the channel named in `Request::LoadBlob` and says "ready"; the
//! page then posts the Blob. (An object URL fetched in the worker — the first version — made
//! Chromium copy the whole file into a new Blob in the browser process: 1× the file of memory
//! and 0.1–1.5 s for 38–290 MB.) The yew-agent bridge cannot carry the Blob itself: it encodes
//! every message with bincode.
//!
//! A file picked for the worker to read (`Offer::post_at_once`) also goes at once on the files
//! channel, which the worker joined when it started (`Request::Files`): it is usually there
//! before the worker asks, which saves the "ready" and its answer (the perf test's median
//! handover 5 -> 2 ms, 2×11 rounds). The offer's own channel stays the way for the rest.
//!
//! Built with js_sys calls rather than web-sys types, so no new web-sys features are needed.

use futures::channel::mpsc;
use futures::StreamExt;
use js_sys::{Array, Function, Reflect};
use std::collections::{HashMap, HashSet};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// Prefix of `LoadBlob::url` when the Blob comes through a channel.
pub const PREFIX: &str = "channel:";

fn open(name: &str) -> Result<JsValue, String> {
    let ctor: Function = Reflect::get(&js_sys::global(), &"BroadcastChannel".into())
        .ok()
        .and_then(|c| c.dyn_into().ok())
        .ok_or("this browser has no BroadcastChannel")?;
    Reflect::construct(&ctor, &Array::of1(&name.into())).map_err(|e| format!("{e:?}"))
}

fn call(target: &JsValue, method: &str, args: &[&JsValue]) {
    if let Some(f) = Reflect::get(target, &method.into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
    {
        let array = Array::new();
        for a in args {
            array.push(a);
        }
        let _ = f.apply(target, &array);
    }
}

/// The page's end: offers `blob` on a fresh channel until dropped. `name()` goes in `LoadBlob`.
pub struct Offer {
    channel: JsValue,
    name: String,
    _on_message: Closure<dyn FnMut(JsValue)>,
}

fn random_name(what: &str) -> String {
    let random: String = (0..4)
        .map(|_| format!("{:08x}", (js_sys::Math::random() * 4_294_967_296.0) as u64))
        .collect();
    format!("ragscope-{what}-{random}")
}

impl Offer {
    pub fn new(blob: web_sys::Blob) -> Result<Offer, String> {
        let name = random_name("file");
        let channel = open(&name)?;
        let reply = channel.clone();
        let on_message = Closure::<dyn FnMut(JsValue)>::new(move |_event: JsValue| {
            call(&reply, "postMessage", &[&blob]);
        });
        let _ = Reflect::set(&channel, &"onmessage".into(), on_message.as_ref());
        Ok(Offer {
            channel,
            name: format!("{PREFIX}{name}"),
            _on_message: on_message,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Posts `blob` on the files channel at once (the worker joined it at the start,
    /// `Request::Files`), so it is there when the worker asks for this offer's file: the
    /// "ready" and its answer cost a load 8 ms (the median round of the perf test), on a page
    /// whose main thread is busy showing the new file. The offer still answers "ready",
    /// for a worker that missed this post: one not yet up, or not yet joined, when a file is
    /// picked as the page opens (tests/browser/handover.test.mjs drops every post).
    pub fn post_at_once(&self, blob: &web_sys::Blob) {
        FILES.with(|files| {
            if let Some(channel) = files.borrow().as_ref() {
                let key = self.name.strip_prefix(PREFIX).unwrap_or(&self.name);
                call(channel, "postMessage", &[&Array::of2(&key.into(), blob)]);
            }
        });
    }
}

impl Drop for Offer {
    fn drop(&mut self) {
        call(&self.channel, "close", &[]);
    }
}

/// A channel's `onmessage`, kept as long as the channel.
type Handler = Closure<dyn FnMut(JsValue)>;
/// A Blob as it came, and how ([`POSTED`] or [`ANSWERED`]).
type Delivered = (JsValue, &'static str);

thread_local! {
    /// Offers kept for the page's life (see [`offer_kept`]).
    static KEPT: std::cell::RefCell<Vec<Offer>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The page's end of the files channel ([`Offer::post_at_once`]).
    static FILES: std::cell::RefCell<Option<JsValue>> = const { std::cell::RefCell::new(None) };
    /// The worker's end: the files channel and its handler.
    static JOINED: std::cell::RefCell<Option<(JsValue, Handler)>> =
        const { std::cell::RefCell::new(None) };
    /// Files posted at once that no load asked for yet, by their offer's name.
    static ARRIVED: std::cell::RefCell<HashMap<String, JsValue>> =
        std::cell::RefCell::new(HashMap::new());
    /// Loads waiting for their file, by the offer's name.
    static WAITING: std::cell::RefCell<HashMap<String, mpsc::UnboundedSender<Delivered>>> =
        std::cell::RefCell::new(HashMap::new());
    /// Offers whose file a load took: a copy posted at once that comes later is dropped.
    static TAKEN: std::cell::RefCell<HashSet<String>> = std::cell::RefCell::new(HashSet::new());
}

/// The page's end: opens the channel each picked file is posted on at once; its name goes to
/// the worker in `Request::Files`, before any file.
pub fn open_files_channel() -> Result<String, String> {
    let name = random_name("files");
    let channel = open(&name)?;
    FILES.with(|files| *files.borrow_mut() = Some(channel));
    Ok(name)
}

/// The worker's end of the files channel (`Request::Files`): keeps what the page posts there
/// for the load that asks for it ([`receive`]).
pub fn join_files_channel(name: &str) {
    let Ok(channel) = open(name) else {
        return;
    };
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let data = Reflect::get(&event, &"data".into()).unwrap_or_default();
        let Ok(pair) = data.dyn_into::<Array>() else {
            return;
        };
        if let Some(key) = pair.get(0).as_string() {
            arrived(key, pair.get(1));
        }
    });
    let _ = Reflect::set(&channel, &"onmessage".into(), on_message.as_ref());
    JOINED.with(|joined| *joined.borrow_mut() = Some((channel, on_message)));
}

fn arrived(key: String, blob: JsValue) {
    if let Some(waiting) = WAITING.with(|w| w.borrow_mut().remove(&key)) {
        let _ = waiting.unbounded_send((blob, POSTED));
    } else if !TAKEN.with(|t| t.borrow().contains(&key)) {
        ARRIVED.with(|a| a.borrow_mut().insert(key, blob));
    }
}

/// Offers `blob` for as long as the page lives and returns the name to send (`channel:…`): for
/// a model file the worker may open again (each compute run, each template read), where an
/// object URL was used before — fetching one in the worker copied the whole file.
pub fn offer_kept(blob: &web_sys::Blob) -> Result<String, String> {
    let offer = Offer::new(blob.clone())?;
    let name = offer.name().to_string();
    KEPT.with(|kept| kept.borrow_mut().push(offer));
    Ok(name)
}

/// How a Blob came: on the files channel, posted when it was picked ...
const POSTED: &str = "posted at once";
/// ... or on its offer's channel, in answer to "ready".
const ANSWERED: &str = "asked for";

/// The worker's end: the Blob offered on `name` (without the prefix), and how it came
/// ([`POSTED`] or [`ANSWERED`]), or why not.
pub async fn receive(name: &str) -> Result<(web_sys::Blob, &'static str), String> {
    TAKEN.with(|t| t.borrow_mut().insert(name.to_string()));
    let got = match ARRIVED.with(|a| a.borrow_mut().remove(name)) {
        Some(posted) => Ok((posted, POSTED)),
        None => ask_for(name).await,
    };
    WAITING.with(|w| w.borrow_mut().remove(name));
    let (data, how) = got?;
    let blob = data
        .dyn_into::<web_sys::Blob>()
        .map_err(|_| "the page handed over something else than a file".to_string())?;
    Ok((blob, how))
}

/// Says "ready" on the offer's channel until the file comes, there or on the files channel.
async fn ask_for(name: &str) -> Result<Delivered, String> {
    let channel = open(name)?;
    let (tx, mut rx) = mpsc::unbounded();
    WAITING.with(|w| w.borrow_mut().insert(name.to_string(), tx.clone()));
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let data = Reflect::get(&event, &"data".into()).unwrap_or_default();
        let _ = tx.unbounded_send((data, ANSWERED));
    });
    let _ = Reflect::set(&channel, &"onmessage".into(), on_message.as_ref());
    // "ready" is said again until the Blob arrives: Chromium registers a BroadcastChannel
    // with the browser process asynchronously, on another pipe than the worker's messages,
    // so the first "ready" can reach the broker before the page's channel is known there and
    // be lost (seen as a load that never ended, a few times in 40 runs on a loaded machine).
    // Soon at first, then every 100 ms (about 30 s in all): a lost first "ready" answered
    // after 100 ms made the perf test's load 0.1 s longer. The page answers each "ready";
    // only the first Blob is taken.
    let mut data =
        Err("the page did not hand the file over (it was removed, or the page closed)".to_string());
    // With the files channel joined, the Blob is usually on its way there (posted before the
    // request that asks for it, but through the browser process): a short wait first, quiet.
    let quiet = JOINED.with(|joined| joined.borrow().is_some());
    let waits_ms = quiet
        .then_some(3)
        .into_iter()
        .chain([5, 10, 20, 40])
        .chain(std::iter::repeat(100));
    for (i, wait_ms) in waits_ms.take(300).enumerate() {
        if !(quiet && i == 0) {
            call(&channel, "postMessage", &[&"ready".into()]);
        }
        let tick = gloo::timers::future::TimeoutFuture::new(wait_ms);
        match futures::future::select(rx.next(), tick).await {
            futures::future::Either::Left((Some(d), _)) => {
                data = Ok(d);
                break;
            }
            futures::future::Either::Left((None, _)) => break,
            futures::future::Either::Right(_) => {}
        }
    }
    call(&channel, "close", &[]);
    drop(on_message);
    data
}
