//! Batch mode for judge jobs in the worker: before the ordinary run, the job's requests go to the
//! provider's batch API (crates/judge `batch`), the batch ids are kept in the judge cache itself
//! (`CacheStateStore`: IndexedDB in the browser, so a reload and a new start of the same job
//! resume the same batches), the worker polls with backoff while the page is open, and the
//! replies land in the cache. The returned environment then runs the job as usual: every reply
//! comes from the cache and is parsed exactly as in a synchronous run; requests the batch did not
//! answer are recorded as failed with the batch's reason (never given a grade).

use crate::protocol::judge_batch::{BatchRow, BatchUpdate};
use ragscope_judge::batch::state::CacheStateStore;
use ragscope_judge::batch::{prefetch, BatchEvent, BatchOnly, BatchOptions, Outcome};
use ragscope_judge::{Env, Job, JudgeOptions, Usage};
use std::rc::Rc;
use std::time::Duration;

/// A minute between the first polls, growing to ten: batches take minutes to hours.
pub fn options() -> BatchOptions {
    BatchOptions {
        poll_interval: Duration::from_secs(60),
        max_poll_interval: Duration::from_secs(600),
        wait: true,
        ..BatchOptions::default()
    }
}

/// The rows of a job's batches, kept up to date from the batch layer's events.
#[derive(Debug, Default)]
pub struct Rows {
    pub update: BatchUpdate,
}

impl Rows {
    pub fn new(job: u32) -> Self {
        Rows {
            update: BatchUpdate {
                job,
                ..BatchUpdate::default()
            },
        }
    }

    fn row(&mut self, id: &str) -> &mut BatchRow {
        let rows = &mut self.update.rows;
        match rows.iter().position(|r| r.id == id) {
            Some(i) => &mut rows[i],
            None => {
                rows.push(BatchRow {
                    id: id.to_string(),
                    state: String::new(),
                    requests: None,
                    imported: false,
                });
                let last = rows.len() - 1;
                &mut rows[last]
            }
        }
    }

    /// Applies `event`; true when the panel should hear about it.
    pub fn apply(&mut self, event: BatchEvent) -> bool {
        match event {
            BatchEvent::Resumed { ids } => {
                for id in ids {
                    self.row(&id).state = "resumed".into();
                }
            }
            BatchEvent::Submitted { id, requests } => {
                let r = self.row(&id);
                r.state = "submitted".into();
                r.requests = Some(requests);
            }
            BatchEvent::Polled { id, state } => {
                let r = self.row(&id);
                if r.state == state {
                    return false;
                }
                r.state = state;
            }
            BatchEvent::PollRetry { id, reason } => {
                self.update.note = Some(format!("batch {id}: a poll failed, retrying: {reason}"));
            }
            BatchEvent::Imported { id, ok, failed } => {
                let r = self.row(&id);
                r.imported = true;
                r.requests = r.requests.or(Some(ok + failed));
                self.update.note = Some(format!(
                    "batch {id}: {ok} replies stored in the cache, {failed} failed"
                ));
            }
            BatchEvent::Warning(w) => self.update.note = Some(w),
        }
        true
    }
}

/// Submits or resumes the job's batches, waits for them (polling while the worker lives) and
/// returns the environment to run the job with, and the tokens bought through the batch.
pub async fn batch_env(
    job_id: u32,
    job: &Job,
    env: &Env,
    opts: &JudgeOptions,
    batch: &BatchOptions,
    on_update: &mut dyn FnMut(BatchUpdate),
) -> Result<(Env, Usage), String> {
    let store = CacheStateStore::new(env.cache.clone());
    let mut rows = Rows::new(job_id);
    let mut on_event = |e: BatchEvent| {
        if rows.apply(e) {
            on_update(rows.update.clone());
        }
    };
    match prefetch(job, env, opts, batch, &store, &mut on_event).await? {
        Outcome::Done(imported) => {
            let mut quiet = env.clone();
            quiet.transport = Rc::new(BatchOnly::new(job, env, &imported));
            Ok((quiet, imported.usage))
        }
        Outcome::Pending(_) => Err(
            "the batches are still running: start the same job again to keep waiting for them"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::future::LocalBoxFuture;
    use ragscope_judge::fake::{self, FakeServer};
    use ragscope_judge::native::UreqTransport;
    use ragscope_judge::task::umbrela::Umbrela;
    use ragscope_judge::{
        provider, run_job, ApiKey, CacheStore, Control, MemoryCache, ProviderConfig, ProviderKind,
        Runtime,
    };

    struct Instant;
    impl Runtime for Instant {
        fn sleep(&self, _: Duration) -> LocalBoxFuture<'static, ()> {
            Box::pin(async {})
        }
        fn now_ms(&self) -> u64 {
            1_700_000_000_000
        }
    }

    #[test]
    fn offered_from_the_threshold_for_providers_with_a_batch_api() {
        use crate::protocol::judge_batch::{offered, OFFER_AT_REQUESTS};
        use crate::protocol::judges::ProviderChoice;
        assert!(!offered(ProviderChoice::Anthropic, OFFER_AT_REQUESTS - 1));
        assert!(offered(ProviderChoice::Anthropic, OFFER_AT_REQUESTS));
        assert!(offered(ProviderChoice::Gemini, 10_000));
        assert!(offered(ProviderChoice::OpenAi, 10_000));
        assert!(!offered(ProviderChoice::OpenAiCompatible, 10_000));
    }

    #[test]
    fn a_reload_resumes_the_batch_and_the_job_reads_the_cache() {
        let server = FakeServer::start(fake::markers()).unwrap();
        let cache: Rc<dyn CacheStore> = Rc::new(MemoryCache::new());
        let config = ProviderConfig::new(
            ProviderKind::Anthropic,
            "fake-model",
            Some(&server.url()),
            Some(ApiKey::new("sk-ant-worker")),
        )
        .unwrap();
        let env = Env {
            provider: Rc::from(provider::provider(config)),
            transport: Rc::new(UreqTransport::new()),
            runtime: Rc::new(Instant),
            cache,
        };
        let task = Umbrela::new();
        let items = [("d0", "FAKE{grade=2}"), ("d1", "FAKE{batcherror}")]
            .iter()
            .map(|(d, t)| task.item("q1", d, "the question?", t).unwrap())
            .collect();
        let job = Job {
            task: Rc::new(task),
            items,
            samples: 1,
        };
        let opts = JudgeOptions::default();
        // The page is closed while the batch runs: the first worker only submits.
        let mut first = Vec::new();
        let pending = block_on(batch_env(
            7,
            &job,
            &env,
            &opts,
            &BatchOptions {
                wait: false,
                ..options()
            },
            &mut |u| first.push(u),
        ));
        let Err(why) = pending else {
            panic!("ended before its first poll")
        };
        assert!(why.contains("still running"), "{why}");
        assert_eq!(first[0].rows[0].state, "submitted");
        assert_eq!(first[0].rows[0].requests, Some(2));
        // After a reload, the same job: resumed, not submitted again.
        let mut updates = Vec::new();
        let (quiet, usage) = block_on(batch_env(8, &job, &env, &opts, &options(), &mut |u| {
            updates.push(u)
        }))
        .unwrap();
        assert_eq!(server.batch_submissions(), 1);
        assert_eq!(updates[0].rows[0].state, "resumed");
        let last = updates.last().unwrap();
        assert!(last.rows[0].imported && last.rows[0].state == "ended");
        assert_eq!(usage.input_tokens, fake::FAKE_INPUT_TOKENS);
        let before = server.request_count();
        let summary = block_on(run_job(&job, &quiet, &opts, &Control::new(), &mut |_| {}));
        assert_eq!(server.request_count(), before);
        assert_eq!(job.task.write_output(&summary.records), "q1 0 d0 2\n");
        let failed = summary.records[1].error.clone().unwrap_or_default();
        assert!(failed.starts_with("batch: "), "{failed}");
    }
}
