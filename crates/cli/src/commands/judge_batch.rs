//! `--batch` for every `ragscope judge` command: the providers' batch APIs through
//! `ragscope_judge::batch` (half price, answered within 24 h). The batch ids are saved in
//! `<cache-dir>/batches/<run-key>.json` as soon as a batch is submitted, so the same command run
//! again (after Ctrl-C, a crash, or `--no-wait`) polls the same batches instead of paying twice.
//! The replies land in the reply cache, and the run then goes through the synchronous path's
//! parsing, log and outputs unchanged.

use super::judge::CommonArgs;
use super::utility::Failure;
use futures::executor::block_on;
use ragscope_judge::batch::state::DirStateStore;
use ragscope_judge::batch::{prefetch, BatchEvent, BatchOnly, BatchOptions, Imported, Outcome};
use ragscope_judge::{Env, Job, JudgeOptions, Usage};
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

/// Exit code of `--no-wait` while batches are still running (0 done, 3 failures, 2 usage).
pub const EXIT_PENDING: u8 = 4;

pub struct BatchRun {
    store: DirStateStore,
    options: BatchOptions,
    quiet: bool,
}

/// What a round's batch left for the run.
pub enum Round {
    /// The replies are in the cache: run with this env (it sends nothing).
    Ready { env: Env, usage: Usage },
    /// `--no-wait` and the batches are still running.
    Pending,
}

impl BatchRun {
    /// The batch setup of `c` (`None` without `--batch`); `cache_dir` is the reply cache's.
    pub(super) fn new(c: &CommonArgs, cache_dir: Option<&Path>) -> Result<Option<Self>, Failure> {
        if !c.batch {
            if c.no_wait || c.poll_interval.is_some() {
                return Err(Failure::Usage(
                    "--no-wait and --poll-interval go with --batch".into(),
                ));
            }
            return Ok(None);
        }
        let Some(dir) = cache_dir else {
            return Err(Failure::Usage(
                "--batch keeps its replies and batch ids in the cache: drop --no-cache".into(),
            ));
        };
        let poll = c.poll_interval.unwrap_or(30.0);
        if !(poll.is_finite() && poll > 0.0) {
            return Err(Failure::Usage(
                "--poll-interval must be a positive number of seconds".into(),
            ));
        }
        let first = Duration::from_secs_f64(poll);
        Ok(Some(BatchRun {
            store: DirStateStore::new(dir.join("batches")),
            options: BatchOptions {
                poll_interval: first,
                max_poll_interval: first.max(Duration::from_secs(600)),
                wait: !c.no_wait,
                ..BatchOptions::default()
            },
            quiet: c.quiet,
        }))
    }

    /// Submits or resumes the round's batches and, unless `--no-wait`, waits and imports.
    pub(super) fn round(
        &self,
        job: &Job,
        env: &Env,
        opts: &JudgeOptions,
    ) -> Result<Round, Failure> {
        let quiet = self.quiet;
        let mut last: Vec<(String, String)> = Vec::new();
        let mut on_event = |e: BatchEvent| match e {
            BatchEvent::Resumed { ids } => {
                eprintln!(
                    "ragscope judge: resuming batch {} (submitted by an earlier run)",
                    ids.join(", ")
                );
            }
            BatchEvent::Submitted { id, requests } => {
                eprintln!("ragscope judge: submitted batch {id} ({requests} requests)");
            }
            BatchEvent::Polled { id, state } => {
                // State changes only: a day of polls is not a day of lines.
                let changed = match last.iter_mut().find(|(i, _)| *i == id) {
                    Some((_, s)) if *s == state => false,
                    Some((_, s)) => {
                        *s = state.clone();
                        true
                    }
                    None => {
                        last.push((id.clone(), state.clone()));
                        true
                    }
                };
                if changed && !quiet {
                    eprintln!("ragscope judge: batch {id}: {state}");
                }
            }
            BatchEvent::PollRetry { id, reason } => {
                if !quiet {
                    eprintln!("ragscope judge: batch {id}: poll failed, will retry: {reason}");
                }
            }
            BatchEvent::Imported { id, ok, failed } => {
                eprintln!(
                    "ragscope judge: batch {id}: {ok} replies stored in the cache, {failed} failed"
                );
            }
            BatchEvent::Warning(w) => eprintln!("ragscope judge: warning: {w}"),
        };
        let outcome = block_on(prefetch(
            job,
            env,
            opts,
            &self.options,
            &self.store,
            &mut on_event,
        ))
        .map_err(Failure::Error)?;
        match outcome {
            Outcome::Pending(state) => {
                for b in state.batches.iter().filter(|b| !b.imported) {
                    println!("{}\t{}\t{} requests", b.id, b.state, b.custom_ids.len());
                }
                eprintln!(
                    "ragscope judge: batches still running; the ids are kept in {}: run the same \
                     command again to collect the results (exit {EXIT_PENDING})",
                    self.store.path(&state.run_key).display()
                );
                Ok(Round::Pending)
            }
            Outcome::Done(imported) => Ok(ready(job, env, imported)),
        }
    }
}

fn ready(job: &Job, env: &Env, imported: Imported) -> Round {
    let mut quiet = env.clone();
    quiet.transport = Rc::new(BatchOnly::new(job, env, &imported));
    Round::Ready {
        env: quiet,
        usage: imported.usage,
    }
}
