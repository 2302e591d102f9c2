// Read APIs of a picked File, in a dedicated worker (where crates/worker/src/engine/blob_load.rs reads), timed
// alone and with a stand-in parse (a busy loop of PARSE_MS_PER_MB per megabyte) between reads.
// Posts { name: [ms per round] } to the page. Run by run.mjs.
const PARSE_MS_PER_MB = 2.5;
const ROUNDS = 7;
const now = () => performance.now();
const busy = (ms) => { const t = now(); while (now() - t < ms); };
const parse = (bytes) => busy((bytes / 1e6) * PARSE_MS_PER_MB);

onmessage = async (e) => {
  const blob = e.data;
  const size = blob.size;
  // Stands in for wasm memory: every chunk is copied once, as the worker copies it into wasm.
  const heap = new Uint8Array(8 << 20);
  const fileReaderSync = (slice, withParse) => () => {
    const reader = new FileReaderSync();
    for (let at = 0; at < size; at += slice) {
      const bytes = new Uint8Array(reader.readAsArrayBuffer(blob.slice(at, Math.min(at + slice, size))));
      for (let o = 0; o < bytes.length; o += heap.length) heap.set(bytes.subarray(o, o + heap.length));
      if (withParse) parse(bytes.length);
    }
  };
  // One stream (of `part` of the file), chunks gathered into batches of `batch` bytes.
  const stream = async (part, batch, withParse) => {
    const reader = part.stream().getReader();
    let filled = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (filled + value.length > heap.length) filled = 0;
      heap.set(value, filled);
      filled += value.length;
      if (filled >= batch) { if (withParse) parse(filled); filled = 0; }
    }
    if (withParse) parse(filled);
  };
  const halves = () => [blob.slice(0, size >> 1), blob.slice(size >> 1)];
  const variants = {
    'FileReaderSync 16 MiB slices': fileReaderSync(16 << 20, false),
    'Blob.stream()': () => stream(blob, 1 << 20, false),
    'two Blob.stream() of halves at once': () => Promise.all(halves().map((h) => stream(h, 1 << 20, false))),
    'Blob.arrayBuffer() whole': () => blob.arrayBuffer(),
    'parse stand-in alone': () => parse(size),
    '+parse: FileReaderSync 16 MiB slices': fileReaderSync(16 << 20, true),
    '+parse: Blob.stream(), 256 KiB batches': () => stream(blob, 256 << 10, true),
    '+parse: Blob.stream(), 1 MiB batches': () => stream(blob, 1 << 20, true),
    '+parse: Blob.stream(), 4 MiB batches': () => stream(blob, 4 << 20, true),
    '+parse: arrayBuffer() of 4 MiB slices, 3 ahead': async () => {
      const queue = [];
      let at = 0;
      const ahead = () => {
        while (queue.length < 3 && at < size) {
          const end = Math.min(at + (4 << 20), size);
          queue.push(blob.slice(at, end).arrayBuffer());
          at = end;
        }
      };
      ahead();
      while (queue.length) {
        const bytes = new Uint8Array(await queue.shift());
        ahead();
        for (let o = 0; o < bytes.length; o += heap.length) heap.set(bytes.subarray(o, o + heap.length));
        parse(bytes.length);
      }
    },
  };
  // A second worker reads the stream and transfers each chunk here: it drains the browser's pipe
  // while this worker parses, so reading is never held back by the pipe's size.
  const readerSource = `onmessage = async (e) => {
    const reader = e.data.stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) { postMessage(null); break; }
      postMessage(value, [value.buffer]);
    }
  };`;
  const readerUrl = URL.createObjectURL(new Blob([readerSource], { type: 'text/javascript' }));
  const viaReader = (batch) => () => new Promise((done) => {
    const w = new Worker(readerUrl);
    let filled = 0;
    w.onmessage = (m) => {
      const value = m.data;
      if (value === null) { parse(filled); w.terminate(); done(); return; }
      if (filled + value.length > heap.length) filled = 0;
      heap.set(value, filled);
      filled += value.length;
      if (filled >= batch) { parse(filled); filled = 0; }
    };
    w.postMessage(blob);
  });
  variants['+parse: a reader worker, 1 MiB batches'] = viaReader(1 << 20);
  variants['+parse: a reader worker, 256 KiB batches'] = viaReader(256 << 10);
  const out = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(variants)) {
      const t = now();
      await run();
      (out[name] ??= []).push(now() - t);
    }
  }
  postMessage(out);
};
