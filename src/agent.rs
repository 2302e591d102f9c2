//! The evaluation worker: a yew-agent reactor that owns an [`engine::Workspace`].

use crate::engine::Workspace;
use crate::protocol::{Request, Response};
use futures::{SinkExt, StreamExt};
use yew_agent::reactor::{reactor, ReactorScope};

#[reactor(EvalReactor)]
pub async fn eval_reactor(mut scope: ReactorScope<Request, Response>) {
    let mut workspace = Workspace::default();
    while let Some(request) = scope.next().await {
        let response = workspace.handle(request);
        if let Some(response) = response {
            if scope.send(response).await.is_err() {
                break;
            }
        }
    }
}
