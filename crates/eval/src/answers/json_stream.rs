//! A stream of top-level JSON values fed in byte chunks: JSON Lines, and also one pretty-printed
//! object over many lines (the TREC 2024 RAG README example is written that way).
//!
//! Written by hand because serde_json's `StreamDeserializer` needs the whole text (or a blocking
//! reader), while the worker and the CLI feed chunks of any size. The splitter only tracks
//! bracket depth outside strings, so each value is handed to serde_json once: linear time.

use serde::de::DeserializeOwned;

use crate::rag::error::{excerpt, InputError};

/// One complete top-level value: its bytes and where it started (1-based line and column).
pub struct RawValue<'a> {
    pub line: usize,
    pub column: usize,
    pub bytes: &'a [u8],
}

/// Splits a chunked byte stream into top-level JSON values.
#[derive(Default)]
pub struct ValueSplitter {
    buf: Vec<u8>,
    depth: u32,
    in_string: bool,
    escape: bool,
    /// A top-level scalar or junk: runs to the end of its line, for serde_json to reject.
    bare: bool,
    line: usize,
    column: usize,
    start_line: usize,
    start_column: usize,
    at_start: bool,
    bom_seen: usize,
}

impl ValueSplitter {
    pub fn new() -> Self {
        ValueSplitter {
            line: 1,
            at_start: true,
            ..Default::default()
        }
    }

    /// Calls `on_value` for every value completed by `chunk`, stopping at its first error.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_value: impl FnMut(RawValue<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
        let mut chunk = chunk;
        // A UTF-8 byte order mark may start the file (Windows editors write one); it may also
        // arrive split over chunks.
        while self.at_start {
            let Some(&b) = chunk.first() else {
                return Ok(());
            };
            if b == BOM[self.bom_seen] {
                self.bom_seen += 1;
                chunk = &chunk[1..];
                if self.bom_seen == BOM.len() {
                    self.at_start = false;
                }
            } else {
                self.at_start = false;
                let partial = self.bom_seen;
                self.bom_seen = 0;
                self.bytes(&BOM[..partial], &mut on_value)?;
            }
        }
        self.bytes(chunk, &mut on_value)
    }

    fn bytes<E>(
        &mut self,
        chunk: &[u8],
        on_value: &mut impl FnMut(RawValue<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        for &b in chunk {
            let (line, column) = (self.line, self.column + 1);
            if b == b'\n' {
                self.line += 1;
                self.column = 0;
            } else {
                self.column += 1;
            }
            if self.buf.is_empty() && !self.bare {
                if b.is_ascii_whitespace() {
                    continue;
                }
                self.start_line = line;
                self.start_column = column;
                self.buf.push(b);
                match b {
                    b'{' | b'[' => self.depth = 1,
                    _ => self.bare = true,
                }
                continue;
            }
            if self.bare {
                if b == b'\n' {
                    self.emit(on_value)?;
                } else {
                    self.buf.push(b);
                }
                continue;
            }
            self.buf.push(b);
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.emit(on_value)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Hands over an unfinished last value (serde_json then reports where it ends early).
    pub fn finish<E>(
        &mut self,
        mut on_value: impl FnMut(RawValue<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.at_start && self.bom_seen > 0 {
            // A file that is only the start of a BOM: hand the bytes over as text.
            self.at_start = false;
            let partial = std::mem::take(&mut self.bom_seen);
            self.bytes(&[0xEF, 0xBB, 0xBF][..partial], &mut on_value)?;
        }
        if self.buf.is_empty() {
            return Ok(());
        }
        self.emit(&mut on_value)
    }

    fn emit<E>(
        &mut self,
        on_value: &mut impl FnMut(RawValue<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let result = on_value(RawValue {
            line: self.start_line,
            column: self.start_column,
            bytes: &self.buf,
        });
        self.buf.clear();
        self.depth = 0;
        self.in_string = false;
        self.escape = false;
        self.bare = false;
        result
    }
}

/// Deserialises one value into `T`, with errors at their file position, the field path and
/// the text at fault.
pub fn decode<T: DeserializeOwned>(file: &str, raw: &RawValue<'_>) -> Result<T, InputError> {
    let text = match std::str::from_utf8(raw.bytes) {
        Ok(t) => t,
        Err(e) => {
            let (line, column) = position(raw, e.valid_up_to());
            return Err(InputError::new(
                file,
                line,
                column,
                "",
                "invalid UTF-8".to_string(),
            ));
        }
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let value = T::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track))
        .and_then(|v| de.end().map(|()| v));
    value.map_err(|e| {
        if e.is_eof() {
            return InputError::new(
                file,
                raw.line,
                raw.column,
                "",
                format!(
                    "the JSON record starting here ends early (unclosed brackets or string): '{}'",
                    excerpt(text.trim_end())
                ),
            );
        }
        let (line, column) = if e.line() == 0 {
            (raw.line, raw.column)
        } else if e.line() == 1 {
            (raw.line, raw.column + e.column().saturating_sub(1))
        } else {
            (raw.line + e.line() - 1, e.column())
        };
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        let path = track.path().to_string();
        let path = if path == "." || path == "?" {
            String::new()
        } else {
            path
        };
        let at = text_at(text, e.line(), e.column());
        InputError::new(
            file,
            line,
            column,
            path,
            format!("{message} near '{}'", excerpt(&at)),
        )
    })
}

/// A check failed on a decoded value (not a syntax error): points at where the value starts.
pub fn invalid(
    file: &str,
    raw_line: usize,
    raw_column: usize,
    field: &str,
    message: String,
) -> InputError {
    InputError::new(file, raw_line, raw_column, field, message)
}

fn position(raw: &RawValue<'_>, offset: usize) -> (usize, usize) {
    let before = &raw.bytes[..offset.min(raw.bytes.len())];
    let newlines = before.iter().filter(|&&b| b == b'\n').count();
    match before.iter().rposition(|&b| b == b'\n') {
        None => (raw.line, raw.column + before.len()),
        Some(i) => (raw.line + newlines, before.len() - i),
    }
}

/// The text around serde_json's (1-based) line and column inside the value.
fn text_at(text: &str, line: usize, column: usize) -> String {
    let Some(l) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let start = column.saturating_sub(20);
    let mut start_byte = start.min(l.len());
    while !l.is_char_boundary(start_byte) {
        start_byte -= 1;
    }
    l[start_byte..].to_string()
}

/// Reads all values of a chunked stream into `T`s with `convert` (checks beyond the syntax).
pub struct Records<T> {
    file: String,
    splitter: ValueSplitter,
    pub items: Vec<T>,
}

impl<T> Records<T> {
    pub fn new(file: &str) -> Self {
        Records {
            file: file.to_string(),
            splitter: ValueSplitter::new(),
            items: Vec::new(),
        }
    }

    pub fn feed(
        &mut self,
        chunk: &[u8],
        mut convert: impl FnMut(&str, &RawValue<'_>) -> Result<T, InputError>,
    ) -> Result<(), InputError> {
        let (file, items) = (&self.file, &mut self.items);
        self.splitter.feed(chunk, |raw| {
            items.push(convert(file, &raw)?);
            Ok(())
        })
    }

    pub fn finish(
        mut self,
        mut convert: impl FnMut(&str, &RawValue<'_>) -> Result<T, InputError>,
    ) -> Result<Vec<T>, InputError> {
        let (file, items) = (&self.file, &mut self.items);
        self.splitter.finish(|raw| {
            items.push(convert(file, &raw)?);
            Ok(())
        })?;
        if self.items.is_empty() {
            return Err(InputError::new(
                &self.file,
                0,
                0,
                "",
                "file is empty (no JSON records)",
            ));
        }
        Ok(self.items)
    }
}

/// Feeds `reader` to `feed` in 1 MiB chunks.
pub fn read_chunks(
    file: &str,
    mut reader: impl std::io::Read,
    mut feed: impl FnMut(&[u8]) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => feed(&chunk[..n])?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(InputError::new(file, 0, 0, "", e.to_string())),
        }
    }
}
