//! The worker reads picked files as streams (crates/worker/src/engine/blob_load.rs): through a BYOB
//! reader where `Blob.stream()` is a byte stream (Chromium's), through the default reader where the
//! stream is not one (other browsers may give such streams). Both paths must hand over every
//! byte in order; Chromium's own Blobs only ever take the first, so the second is driven here
//! with a stream that is not a byte stream.
#![cfg(target_arch = "wasm32")]

use ragscope_worker::engine::blob_load::ByteStream;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// 3.5 MiB of bytes that differ from position to position (more than one reader buffer).
fn bytes() -> Vec<u8> {
    (0..(7usize << 19))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

async fn read_all(source: &JsValue) -> (Vec<u8>, bool, usize) {
    let mut stream = ByteStream::open(source).expect("a stream");
    let byob = stream.is_byob();
    let (mut out, mut chunks) = (Vec::new(), 0);
    while let Some(chunk) = stream.next().await.expect("a chunk") {
        out.extend_from_slice(&chunk.to_vec());
        chunks += 1;
    }
    (out, byob, chunks)
}

#[wasm_bindgen_test]
async fn a_blob_is_read_with_a_byob_reader_byte_for_byte() {
    let want = bytes();
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&want[..]));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).expect("a Blob");
    let (got, byob, chunks) = read_all(blob.as_ref()).await;
    assert!(byob, "Chromium's Blob.stream() is a byte stream");
    assert!(
        chunks > 1,
        "one chunk only: the buffer reuse was not exercised"
    );
    assert!(got == want, "{} bytes read of {}", got.len(), want.len());
}

#[wasm_bindgen_test]
async fn a_stream_that_is_no_byte_stream_is_read_with_the_default_reader() {
    let want = bytes();
    // 300 KiB chunks, each in its own ArrayBuffer, as a default stream hands them over
    let chunks = js_sys::Array::new();
    for c in want.chunks(300 << 10) {
        chunks.push(&js_sys::Uint8Array::from(c));
    }
    let source = js_sys::Function::new_with_args(
        "chunks",
        "return { stream: () => new ReadableStream({ start(c) { for (const x of chunks) c.enqueue(x); c.close(); } }) };",
    )
    .call1(&JsValue::NULL, &chunks)
    .expect("an object with stream()");
    let (got, byob, n) = read_all(&source).await;
    assert!(
        !byob,
        "a stream that is no byte stream refuses a BYOB reader"
    );
    assert_eq!(n, chunks.length() as usize);
    assert!(got == want, "{} bytes read of {}", got.len(), want.len());
}
