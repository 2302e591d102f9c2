//! Batch mode for judge jobs in the worker: before the ordinary run, the job's requests go to the
//! provider's batch API (crates/judge `batch`), the batch ids are kept in the judge cache itself
//! (`CacheStateStore`: IndexedDB in the browser, so a reload and a new start of the same job
//! resume the same batches), the worker polls with backoff while the page is open, and the
//! replies land in the cache. The returned environment then runs the job as usual: every reply
//! comes from the cache and is parsed exactly as in a synchronous run; requests the batch did not
//! answer are recorded as failed with the batch's reason (never given a grade).

use ragscope_judge::batch::state::{parse_state, CacheStateStore, RunState};
use ragscope_judge::batch::{prefetch, BatchEvent, BatchOnly, BatchOptions, Outcome};
use ragscope_judge::runner::ControlState;
use ragscope_judge::{Control, Env, Job, JudgeOptions, Usage};
use ragscope_protocol::judge_batch::{BatchRow, BatchUpdate, KeptBatch, KeptRun};
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
                    answered: None,
                });
                let last = rows.len() - 1;
                &mut rows[last]
            }
        }
    }

    /// Applies `event`, seen at `now_ms`; true when the panel should hear about it.
    pub fn apply(&mut self, event: BatchEvent, now_ms: u64) -> bool {
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
                // Every poll is news (minutes apart): the panel shows when it last asked.
                self.row(&id).state = state;
                self.update.polled_ms = Some(now_ms);
            }
            BatchEvent::PollRetry { id, reason } => {
                self.update.note = Some(format!("batch {id}: a poll failed, retrying: {reason}"));
            }
            BatchEvent::Imported { id, ok, failed } => {
                let r = self.row(&id);
                r.imported = true;
                r.answered = Some((ok, failed));
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
    let runtime = env.runtime.clone();
    let mut on_event = |e: BatchEvent| {
        if rows.apply(e, runtime.now_ms()) {
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

/// How often a batch job that waits looks at its Cancel button.
const CANCEL_CHECK: Duration = Duration::from_millis(500);

/// [`batch_env`] that gives up when `control` is cancelled (checked every [`CANCEL_CHECK`]): the batches
/// keep running at the provider and their ids stay in the cache, so starting the same job again
/// collects them.
pub async fn batch_env_until_cancelled(
    job_id: u32,
    job: &Job,
    env: &Env,
    opts: &JudgeOptions,
    batch: &BatchOptions,
    control: &Control,
    on_update: &mut dyn FnMut(BatchUpdate),
) -> Result<(Env, Usage), String> {
    let runtime = env.runtime.clone();
    let cancelled = Box::pin(async move {
        while control.state() != ControlState::Cancelled {
            runtime.sleep(CANCEL_CHECK).await;
        }
    });
    let work = Box::pin(batch_env(job_id, job, env, opts, batch, on_update));
    match futures::future::select(work, cancelled).await {
        futures::future::Either::Left((r, _)) => r,
        futures::future::Either::Right(_) => Err(
            "cancelled while waiting for the batches: they keep running at the provider and \
             their ids are kept in this browser; start the same job again to collect them \
             (nothing is submitted twice)"
                .into(),
        ),
    }
}

/// The batches of `states` not imported yet, for the panel after a reload. `states` are the
/// judge cache's batch records as (key, JSON text); one that does not parse is skipped with
/// its reason in the second list (never a panic).
pub fn kept_runs(states: &[(String, String)]) -> (Vec<KeptRun>, Vec<String>) {
    let mut runs = Vec::new();
    let mut problems = Vec::new();
    for (key, text) in states {
        let state: RunState = match parse_state(text, key) {
            Ok(s) => s,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let batches: Vec<KeptBatch> = state
            .batches
            .iter()
            .filter(|b| !b.imported)
            .map(|b| KeptBatch {
                id: b.id.clone(),
                state: b.state.clone(),
                requests: b.custom_ids.len(),
                submitted_ms: b.submitted_ms,
            })
            .collect();
        if !batches.is_empty() {
            runs.push(KeptRun {
                provider: state.provider,
                model: state.model,
                task: state.task,
                batches,
            });
        }
    }
    (runs, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::future::LocalBoxFuture;
    use ragscope_judge::native::UreqTransport;
    use ragscope_judge::task::umbrela::Umbrela;
    use ragscope_judge::{
        provider, run_job, ApiKey, CacheStore, Control, MemoryCache, ProviderConfig, ProviderKind,
        Runtime,
    };
    use ragscope_judge_fake::{self as fake, FakeServer};

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
        use ragscope_protocol::judge_batch::{offered, threshold_of_query, OFFER_AT_REQUESTS};
        use ragscope_protocol::judges::ProviderChoice;
        let t = OFFER_AT_REQUESTS;
        assert!(!offered(ProviderChoice::Anthropic, t - 1, t));
        assert!(offered(ProviderChoice::Anthropic, t, t));
        assert!(offered(ProviderChoice::Gemini, 10_000, t));
        assert!(offered(ProviderChoice::OpenAi, 10_000, t));
        assert!(!offered(ProviderChoice::OpenAiCompatible, 10_000, t));
        // Nothing to send (all cached): nothing to batch, whatever the threshold.
        assert!(!offered(ProviderChoice::Anthropic, 0, 1));
        // The page's `?batch-at=N`.
        assert_eq!(threshold_of_query("?demo=0&batch-at=3"), 3);
        assert_eq!(threshold_of_query("?batch-at=3&demo=0"), 3);
        for q in ["", "?demo=0", "?batch-at=0", "?batch-at=x", "?xbatch-at=5"] {
            assert_eq!(threshold_of_query(q), t, "{q}");
        }
    }

    #[test]
    fn rows_follow_the_events_and_kept_runs_list_what_is_not_imported() {
        let mut rows = Rows::new(3);
        assert!(rows.apply(
            BatchEvent::Submitted {
                id: "msgbatch_1".into(),
                requests: 5
            },
            10
        ));
        rows.apply(
            BatchEvent::Polled {
                id: "msgbatch_1".into(),
                state: "in_progress".into(),
            },
            20,
        );
        assert_eq!(rows.update.polled_ms, Some(20));
        assert_eq!(rows.update.rows[0].state, "in_progress");
        rows.apply(
            BatchEvent::Imported {
                id: "msgbatch_1".into(),
                ok: 4,
                failed: 1,
            },
            30,
        );
        let r = &rows.update.rows[0];
        assert_eq!(
            (r.imported, r.answered, r.requests),
            (true, Some((4, 1)), Some(5))
        );
        assert_eq!(rows.update.job, 3);

        let state = |imported: bool| {
            format!(
                r#"{{"version":1,"run_key":"ab","provider":"anthropic","model":"m","task":"umbrela",
                "batches":[{{"id":"msgbatch_9","submitted_ms":5,"custom_ids":["a","b"],"state":"in_progress","imported":{imported}}}]}}"#
            )
        };
        let (runs, problems) = kept_runs(&[
            ("batch-state-ab".into(), state(false)),
            ("batch-state-cd".into(), state(true)),
            ("batch-state-ef".into(), "{not json".into()),
        ]);
        assert_eq!(runs.len(), 1);
        assert_eq!(
            (runs[0].provider.as_str(), runs[0].task.as_str()),
            ("anthropic", "umbrela")
        );
        assert_eq!(
            runs[0].batches,
            vec![KeptBatch {
                id: "msgbatch_9".into(),
                state: "in_progress".into(),
                requests: 2,
                submitted_ms: 5
            }]
        );
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("batch-state-ef: line 1"),
            "{}",
            problems[0]
        );
    }

    /// Each sleep is pending once (a timer that has not fired yet), then done.
    struct Yielding;
    impl Runtime for Yielding {
        fn sleep(&self, _: Duration) -> LocalBoxFuture<'static, ()> {
            let mut fired = false;
            Box::pin(futures::future::poll_fn(move |cx| {
                if fired {
                    std::task::Poll::Ready(())
                } else {
                    fired = true;
                    cx.waker().wake_by_ref();
                    std::task::Poll::Pending
                }
            }))
        }
        fn now_ms(&self) -> u64 {
            1_700_000_000_000
        }
    }

    #[test]
    fn cancel_while_waiting_keeps_the_batch_and_a_new_start_collects_it() {
        let server = FakeServer::start(fake::markers()).unwrap();
        let cache: Rc<dyn CacheStore> = Rc::new(MemoryCache::new());
        let env = |runtime: Rc<dyn Runtime>| Env {
            provider: Rc::from(provider::provider(
                ProviderConfig::new(
                    ProviderKind::OpenAi,
                    "gpt-4o-mini",
                    Some(&format!("{}/v1", server.url())),
                    Some(ApiKey::new("sk-worker")),
                )
                .unwrap(),
            )),
            transport: Rc::new(UreqTransport::new()),
            runtime,
            cache: cache.clone(),
        };
        let task = Umbrela::new();
        let items = [("d0", "FAKE{grade=3}"), ("d1", "FAKE{grade=0}")]
            .iter()
            .map(|(d, t)| task.item("q1", d, "the question?", t).unwrap())
            .collect();
        let job = Job {
            task: Rc::new(task),
            items,
            samples: 1,
        };
        let opts = JudgeOptions::default();
        // Cancelled once the batch is seen running (the page's Cancel while it waits).
        let control = Control::new();
        let canceller = control.clone();
        let mut seen = Vec::new();
        let r = block_on(batch_env_until_cancelled(
            1,
            &job,
            &env(Rc::new(Yielding)),
            &opts,
            &options(),
            &control,
            &mut |u| {
                if u.rows.iter().any(|r| r.state == "in_progress") {
                    canceller.cancel();
                }
                seen.push(u)
            },
        ));
        let Err(why) = r else { panic!("not cancelled") };
        assert!(why.contains("cancelled while waiting"), "{why}");
        assert_eq!(server.batch_submissions(), 1);
        assert_eq!(seen.last().unwrap().rows[0].state, "in_progress");
        // Started again (a reload, or Start after Cancel): resumed, imported, not resubmitted.
        let (quiet, _) = block_on(batch_env_until_cancelled(
            2,
            &job,
            // (A timer that never waits would starve the batch future of the executor.)
            &env(Rc::new(Yielding)),
            &opts,
            &options(),
            &Control::new(),
            &mut |_| {},
        ))
        .unwrap();
        assert_eq!(server.batch_submissions(), 1);
        let summary = block_on(run_job(&job, &quiet, &opts, &Control::new(), &mut |_| {}));
        assert_eq!(
            job.task.write_output(&summary.records),
            "q1 0 d0 3\nq1 0 d1 0\n"
        );
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
