//! Natively, a run held whole can be scored while it is parsed: the parser hands out each
//! topic once the next one starts ([`RunParser::drain`]), a second thread scores it (after
//! reading what it scores against, e.g. the qrels), and its memory goes back to the parser.
//! A run written topic by topic is then never held whole: in the 35 MB benchmark a
//! `trec-eval` call took 9,118 page faults, 2,746 with an empty run (each a zeroed page), and
//! 4,800–5,500 once scoring this way; peak memory went from 45 to 25–31 MB.

use std::sync::mpsc::channel;

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

/// Parses `bytes` here, on this thread only, while another thread first runs `prepare` (e.g.
/// parses the qrels), then `score`s each batch of topics the parser hands out, as a [`Run`]
/// (topics in the order their first lines came); the batch's memory then goes back to the
/// parser. `score` returns `false` to take no more: the parse goes on, for its errors, and
/// ends in [`Parsed::Again`] (or [`Parsed::Rest`] when no batch came after, so the caller's
/// own state must say whether all was scored). Returns what `prepare` made, as `score` left
/// it.
///
/// With `RAGSCOPE_THREADS=1` everything runs on this thread: `prepare`, then the parse, each
/// batch scored as soon as it is handed out ([`RunParser::feed_and_score`]). That is the
/// single-threaded reference the wasm engine is compared with, and what the JS package does.
pub fn parse_handing_out<S: Send>(
    name: &str,
    bytes: &SharedBytes,
    prepare: impl FnOnce() -> S + Send,
    mut score: impl FnMut(&mut S, &Run) -> bool + Send,
) -> (S, Parsed) {
    let one_thread = super::parallel::threads() == 1 || test_one_thread();
    let slice_bytes = slice_bytes();
    let mut parser = RunParser::new(name);
    parser.expect_bytes(slice_bytes.min(bytes.len()));
    if one_thread {
        let mut made = prepare();
        let mut taking = true;
        let fed = bytes.feed_in_slices(slice_bytes, |slice| {
            parser
                .feed_and_score(slice, |part| {
                    count(part.topics().len(), 0);
                    taking = taking && score(&mut made, part);
                })
                .map_err(Stop::Parse)?;
            stop_if_came_back(&parser)
        });
        let parsed = ended(parser, fed.err(), taking);
        return (made, parsed);
    }
    let (handed, to_score) = channel::<Run>();
    let (spent_tx, spent) = channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let scorer = scope.spawn(move || {
            let mut made = prepare();
            for part in to_score {
                if !score(&mut made, &part) {
                    // dropping `to_score` tells the parser
                    break;
                }
                // the parser may be done already: the arena is then dropped here
                let _ = spent_tx.send(part.into_arena());
            }
            made
        });
        let mut sending = true;
        let fed = bytes.feed_in_slices(slice_bytes, |slice| {
            // one parsing thread: the other scores (splitting each slice between two parsing
            // threads as well cost 3 % more CPU and 3 ms more wall time, 21 alternations)
            parser.feed_serial(slice).map_err(Stop::Parse)?;
            stop_if_came_back(&parser)?;
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
        let made = scorer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (made, ended(parser, fed.err(), sending))
    })
}

/// Why a parse that hands out topics stopped early.
enum Stop {
    Parse(ParseError),
    /// A handed-out topic came back: the rest is parsed again anyway.
    CameBack,
}

fn stop_if_came_back(parser: &RunParser) -> Result<(), Stop> {
    match parser.came_back() {
        true => Err(Stop::CameBack),
        false => Ok(()),
    }
}

/// How a parse that handed out topics ended: its error, or else the rest of the run unless
/// a topic came back or the scorer stopped taking them.
fn ended(parser: RunParser, stop: Option<Stop>, scored_all: bool) -> Parsed {
    let parsed = match stop {
        Some(Stop::Parse(e)) => Parsed::Failed(e),
        Some(Stop::CameBack) => Parsed::Again,
        None => match parser.finish() {
            Err(e) => Parsed::Failed(e),
            Ok(_) if !scored_all => Parsed::Again,
            Ok(rest) => Parsed::Rest(rest),
        },
    };
    if matches!(parsed, Parsed::Again) {
        count(0, 1);
    }
    parsed
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
