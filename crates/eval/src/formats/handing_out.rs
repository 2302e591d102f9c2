//! Natively, a run held whole can be scored while it is parsed: the parser hands out each
//! topic once the next one starts ([`RunParser::drain`]), a second thread scores it (after
//! reading what it scores against, e.g. the qrels), and its memory goes back to the parser.
//! A run written topic by topic is then never held whole: in the 35 MB benchmark the run's
//! results and docnos were 6,200 of a `trec-eval` call's 9,100 page faults, each a zeroed
//! page, and most of its peak memory.

use std::sync::mpsc::{channel, Receiver, Sender};

use super::{ParseError, Run, RunParser, SharedBytes};

/// Bytes parsed at a time, as [`super::read_run_input`] does.
const SLICE: usize = 4 << 20;

/// How a parse that handed out topics ended.
pub enum Parsed {
    /// Every line was read: the topics not handed out (normally the last one), with the tag of
    /// the last line.
    Rest(Run),
    /// A handed-out topic got more lines later (the run's topics interleave), or the scorer
    /// stopped taking topics: the caller parses the run again and keeps it whole.
    Again,
    /// What a parse without handing out would have reported, repeated docnos included.
    Failed(ParseError),
}

/// Parses `bytes` here while `scorer` runs on a second thread from the start. `scorer` gets
/// each batch of topics the parser hands out, as a [`Run`] (topics in the order their first
/// lines came), and should send each batch's arena back (`spent`) for the parser to reuse; it
/// drops its receiver to take no more (the parse goes on, for its errors, and ends in
/// [`Parsed::Again`]).
///
/// With `RAGSCOPE_THREADS=1` everything runs on this thread, one step after the other: the
/// parse (the batches wait in the channel), then `scorer`. That is the single-threaded
/// reference the wasm engine is compared with.
pub fn parse_handing_out<T: Send>(
    name: &str,
    bytes: &SharedBytes,
    scorer: impl FnOnce(Receiver<Run>, Sender<Vec<u8>>) -> T + Send,
) -> (T, Parsed) {
    /// Why the parse stopped early.
    enum Stop {
        Parse(ParseError),
        CameBack,
    }
    let (handed, to_score) = channel::<Run>();
    let (spent_tx, spent) = channel::<Vec<u8>>();
    let one_thread = super::parallel::threads() == 1 || test_one_thread();
    std::thread::scope(|scope| {
        /// The scorer, running or to run.
        enum Scoring<S, R, H> {
            Later(S, R),
            Running(H),
        }
        let scoring = match one_thread {
            true => Scoring::Later(scorer, (to_score, spent_tx)),
            false => Scoring::Running(scope.spawn(move || scorer(to_score, spent_tx))),
        };
        let slice_bytes = slice_bytes();
        let mut parser = RunParser::new(name);
        parser.expect_bytes(slice_bytes.min(bytes.len()));
        let mut sending = true;
        let fed = bytes.feed_in_slices(slice_bytes, |slice| {
            parser.feed(slice).map_err(Stop::Parse)?;
            if parser.came_back() {
                return Err(Stop::CameBack);
            }
            if sending {
                let arena = spent
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(slice.len() / 3));
                if let Some(topics) = parser.drain(arena) {
                    count(topics.topics().len(), 0);
                    sending = handed.send(topics).is_ok();
                }
            }
            Ok(())
        });
        drop(handed);
        let scored = match scoring {
            Scoring::Running(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Scoring::Later(scorer, (to_score, spent)) => scorer(to_score, spent),
        };
        let parsed = match fed {
            Err(Stop::Parse(e)) => Parsed::Failed(e),
            Err(Stop::CameBack) => Parsed::Again,
            Ok(()) => match parser.finish() {
                Err(e) => Parsed::Failed(e),
                Ok(_) if !sending => Parsed::Again,
                Ok(rest) => Parsed::Rest(rest),
            },
        };
        if matches!(parsed, Parsed::Again) {
            count(0, 1);
        }
        (scored, parsed)
    })
}

#[cfg(test)]
thread_local! {
    /// Tests: the slice size on this thread (small, so that small files hand out topics
    /// often), and how many topics were handed out and how many parses ended in `Again`.
    pub(crate) static TEST_SLICE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    pub(crate) static TEST_COUNTS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    /// Tests: everything on this thread, as with `RAGSCOPE_THREADS=1`.
    pub(crate) static TEST_ONE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn test_one_thread() -> bool {
    #[cfg(test)]
    return TEST_ONE_THREAD.with(std::cell::Cell::get);
    #[cfg(not(test))]
    false
}

fn slice_bytes() -> usize {
    #[cfg(test)]
    if let Some(bytes) = TEST_SLICE.with(std::cell::Cell::get) {
        return bytes;
    }
    SLICE
}

#[allow(unused_variables)]
fn count(topics: usize, again: usize) {
    #[cfg(test)]
    TEST_COUNTS.with(|c| {
        let (t, a) = c.get();
        c.set((t + topics, a + again));
    });
}
