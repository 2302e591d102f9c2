//! The evaluation worker as the page addresses it: its messages, not its code.
//!
//! A yew-agent bridge is typed by a reactor, but the page only spawns `worker.js` and talks to
//! it through the reactor's scope: bincode-encoded [`Request`]s in, [`Response`]s out. The
//! reactor's code (crates/worker's `agent::EvalReactor`) runs only inside the worker, where
//! it is registered; this handle has the same scope, so the app needs crates/protocol and not the
//! worker. A test in crates/worker (`agent.rs`) checks that the two scopes are one type.

use ragscope_protocol::{Request, Response};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use yew_agent::reactor::{Reactor, ReactorScope};

/// The page's handle on the evaluation worker (`ReactorProvider<EvalWorker>`,
/// `use_reactor_bridge::<EvalWorker, _>`).
pub struct EvalWorker(());

impl Reactor for EvalWorker {
    type Scope = ReactorScope<Request, Response>;

    /// Called only by yew-agent inside a worker that registered this type, and none does:
    /// the worker registers its own reactor. Ends at once if it ever were.
    fn create(_scope: Self::Scope) -> Self {
        EvalWorker(())
    }
}

impl Future for EvalWorker {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}
