//! TREC file formats, read exactly as trec_eval 10.0 reads them.
//!
//! Both parsers are streaming: feed byte chunks of any size (a chunk boundary may fall
//! anywhere, even inside a UTF-8 character) and call `finish`. Whitespace is any ASCII
//! whitespace (spaces or tabs); lines whose first non-blank byte is `#` are comments.

mod error;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod handing_out;
mod hash;
mod input;
#[doc(hidden)]
pub mod line_mask;
pub(crate) mod lines;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod parallel;
mod prefs;
mod qrels;
mod run;
#[cfg(test)]
mod run_parts_tests;
#[cfg(test)]
pub(crate) mod test_runs;
mod topic_index;
mod wasm_heap;

pub use error::{ParseError, ParseErrorKind};
#[cfg(not(target_arch = "wasm32"))]
pub use handing_out::{parse_handing_out, Parsed};
pub(crate) use hash::bytes_cmp;
#[cfg(not(target_arch = "wasm32"))]
pub use input::open_input;
pub use input::{Input, SharedBytes};
pub use lines::{quote_bytes, quote_bytes_max, QUOTE_CHARS};
pub use prefs::{parse_prefs, PrefLine, Prefs, PrefsTopic};
pub use qrels::{parse_qrels, parse_qrels_jg, Qrels, QrelsJg, QrelsParser, QrelsTopic};
pub use run::{parse_run, topic_boundary, RankedDoc, Run, RunParser, RunTopic};
pub use wasm_heap::reserve_wasm_heap;

/// Why reading a file through a streaming parser failed: the reader, or the content.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    Parse(ParseError),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => e.fmt(f),
            ReadError::Parse(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ReadError {}

/// Parses a run from `reader` in 4 MiB chunks (1 MiB on wasm32), so its text is never held whole.
pub fn read_run(name: &str, reader: impl std::io::Read) -> Result<Run, ReadError> {
    let mut parser = RunParser::new(name);
    feed_chunks(reader, |chunk| parser.feed(chunk))?;
    parser.finish().map_err(ReadError::Parse)
}

/// [`read_run`] on an [`Input`]: a stream is read in chunks, bytes held whole are parsed in
/// place in slices of the same size.
pub fn read_run_input(name: &str, input: Input) -> Result<Run, ReadError> {
    match input {
        Input::Stream(reader) => read_run(name, reader),
        Input::Whole(bytes) => {
            let mut parser = RunParser::new(name);
            parser.expect_bytes(bytes.len());
            bytes
                .feed_in_slices(CHUNK, |slice| parser.feed(slice))
                .map_err(ReadError::Parse)?;
            parser.finish().map_err(ReadError::Parse)
        }
    }
}

/// [`read_qrels`] on an [`Input`].
pub fn read_qrels_input(name: &str, input: Input) -> Result<Qrels, ReadError> {
    match input {
        Input::Stream(reader) => read_qrels(name, reader),
        Input::Whole(bytes) => {
            let mut parser = QrelsParser::new(name);
            bytes
                .feed_in_slices(CHUNK, |slice| parser.feed(slice))
                .map_err(ReadError::Parse)?;
            parser.finish().map_err(ReadError::Parse)
        }
    }
}

/// Parses qrels from `reader` in chunks, as [`read_run`].
pub fn read_qrels(name: &str, reader: impl std::io::Read) -> Result<Qrels, ReadError> {
    let mut parser = QrelsParser::new(name);
    feed_chunks(reader, |chunk| parser.feed(chunk))?;
    parser.finish().map_err(ReadError::Parse)
}

/// Natively each chunk is split between two parsing threads: 4 MiB makes a quarter of the
/// thread hand-offs of 1 MiB (35 → 9 on a 35 MB run) for 3 MiB more memory.
const CHUNK: usize = if cfg!(target_arch = "wasm32") {
    1 << 20
} else {
    4 << 20
};

fn feed_chunks(
    mut reader: impl std::io::Read,
    mut feed: impl FnMut(&[u8]) -> Result<(), ParseError>,
) -> Result<(), ReadError> {
    let mut chunk = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => feed(&chunk[..n]).map_err(ReadError::Parse)?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
}
