//! Natively, a run held whole can be scored while it is parsed: the parser hands out each
//! topic once the next one starts ([`RunParser::drain`]), a second thread scores it (after
//! reading what it scores against, e.g. the qrels), and its memory goes back to the parser.
//! A run written topic by topic is then never held whole: in the 35 MB benchmark a
//! `trec-eval` call took 9,118 page faults, 2,746 with an empty run (each a zeroed page), and
//! 4,800–5,500 once scoring this way; peak memory went from 45 to 25–31 MB.

use std::sync::mpsc::channel;

use super::{ParseError, Run, RunParser, SharedBytes};

/// Bytes parsed at a time in a large run, as [`super::read_run_input`] does.
const SLICE: usize = 4 << 20;

/// The smallest slice: a few hundred kilobytes keep the hand-offs between the threads rare.
const MIN_SLICE: usize = 256 << 10;

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
/// A run of one full slice or less (4 MiB) is done so too: there a second thread saved no
/// wall time and cost CPU, since the parser ran ahead of the scorer (still busy with the
/// qrels) into fresh memory. Two threads against one, `trec-eval` medians: a 1.2 MB run
/// 7.8 against 7.9 ms wall and 8.3 against 7.4 ms CPU; a 4.6 MB run 15.5 against 14.8 ms
/// wall in one try, 16.5 against 17.8 ms in another.
pub fn parse_handing_out<S: Send>(
    name: &str,
    bytes: &SharedBytes,
    prepare: impl FnOnce() -> S + Send,
    mut score: impl FnMut(&mut S, &Run) -> bool + Send,
) -> (S, Parsed) {
    let one_thread =
        super::parallel::threads() == 1 || test_one_thread() || bytes.len() <= full_slice();
    let slice_bytes = slice_bytes(bytes.len());
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

/// A test's slice size, if it set one.
fn test_slice() -> Option<usize> {
    #[cfg(test)]
    return TEST_SLICE.with(std::cell::Cell::get);
    #[cfg(not(test))]
    None
}

/// The largest slice ([`SLICE`], or a test's).
fn full_slice() -> usize {
    test_slice().unwrap_or(SLICE)
}

/// An eighth of a run of `total` bytes, as a power of two from [`MIN_SLICE`] to [`SLICE`].
///
/// A run that fits one slice is parsed whole before its first topic is scored, so all its
/// topics' memory is fresh: a page fault per 4 KiB, about 5 us each on the development VM.
/// In eighths, each slice's memory comes back for the next. With runs of one full slice on one
/// thread (above), a 1.2 MB run (28 topics x 1,000) went from 7.9 to 3.1 page faults per 1,000
/// lines, and its CPU per line net of start-up from 1.03-1.07x a 41 MB run's to 0.86-0.94x
/// (a scratch script timing both builds in turn, paired with one-line runs); an 8 MB run from
/// 30.0 to 26.4 ms wall.
fn slice_bytes(total: usize) -> usize {
    test_slice().unwrap_or_else(|| (total / 8).next_power_of_two().clamp(MIN_SLICE, SLICE))
}

#[allow(unused_variables)]
fn count(topics: usize, again: usize) {
    #[cfg(test)]
    TEST_COUNTS.with(|c| {
        let (t, a) = c.get();
        c.set((t + topics, a + again));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `feed_in_slices` needs whole pages; a 1.2 MB run gets about five slices, not one.
    #[test]
    fn slices_are_an_eighth_of_the_run_in_whole_pages() {
        for (total, slice) in [
            (0, MIN_SLICE),
            (34, MIN_SLICE),
            (1_160_279, 256 << 10),
            (11_600_000, 2 << 20),
            (41_433_371, SLICE),
            (290_000_000, SLICE),
            (usize::MAX, SLICE),
        ] {
            assert_eq!(slice_bytes(total), slice, "{total} bytes");
            assert_eq!(slice % 65_536, 0);
        }
    }
}
