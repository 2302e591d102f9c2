//! Hands a `Blob` (a picked file) from the page to the worker without copying its bytes: a
//! `BroadcastChannel` with a random name, which structured-clones the Blob (a handle on the
//! same data). The worker joins the channel named in `Request::LoadBlob` and says "ready"; the
//! page then posts the Blob. (An object URL fetched in the worker — the first version — made
//! Chromium copy the whole file into a new Blob in the browser process: 1× the file of memory
//! and 0.1–1.5 s for 38–290 MB.) The yew-agent bridge cannot carry the Blob itself: it encodes
//! every message with bincode.
//!
//! Built with js_sys calls rather than web-sys types, so no new web-sys features are needed.

use js_sys::{Array, Function, Reflect};
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

impl Offer {
    pub fn new(blob: web_sys::Blob) -> Result<Offer, String> {
        let random: String = (0..4)
            .map(|_| format!("{:08x}", (js_sys::Math::random() * 4_294_967_296.0) as u64))
            .collect();
        let name = format!("ragscope-file-{random}");
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
}

impl Drop for Offer {
    fn drop(&mut self) {
        call(&self.channel, "close", &[]);
    }
}

thread_local! {
    /// Offers kept for the page's life (see [`offer_kept`]).
    static KEPT: std::cell::RefCell<Vec<Offer>> = const { std::cell::RefCell::new(Vec::new()) };
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

/// The worker's end: the Blob offered on `name` (without the prefix), or why not.
pub async fn receive(name: &str) -> Result<web_sys::Blob, String> {
    let channel = open(name)?;
    let (tx, rx) = futures::channel::oneshot::channel::<JsValue>();
    let mut tx = Some(tx);
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        if let Some(tx) = tx.take() {
            let _ = tx.send(Reflect::get(&event, &"data".into()).unwrap_or_default());
        }
    });
    let _ = Reflect::set(&channel, &"onmessage".into(), on_message.as_ref());
    // "ready" is said again until the Blob arrives: Chromium registers a BroadcastChannel
    // with the browser process asynchronously, on another pipe than the worker's messages,
    // so the first "ready" can reach the broker before the page's channel is known there and
    // be lost (seen as a load that never ended, a few times in 40 runs on a loaded machine).
    // Soon at first, then every 100 ms (about 30 s in all): a lost first "ready" answered
    // after 100 ms made the perf test's load 0.1 s longer. The page answers each "ready";
    // only the first Blob is taken.
    let mut rx = rx;
    let mut data =
        Err("the page did not hand the file over (it was removed, or the page closed)".to_string());
    let waits_ms = [5, 10, 20, 40].into_iter().chain(std::iter::repeat(100));
    for wait_ms in waits_ms.take(300) {
        call(&channel, "postMessage", &[&"ready".into()]);
        let tick = gloo::timers::future::TimeoutFuture::new(wait_ms);
        match futures::future::select(rx, tick).await {
            futures::future::Either::Left((Ok(d), _)) => {
                data = Ok(d);
                break;
            }
            futures::future::Either::Left((Err(_), _)) => break,
            futures::future::Either::Right((_, pending)) => rx = pending,
        }
    }
    call(&channel, "close", &[]);
    drop(on_message);
    data?
        .dyn_into::<web_sys::Blob>()
        .map_err(|_| "the page handed over something else than a file".to_string())
}
