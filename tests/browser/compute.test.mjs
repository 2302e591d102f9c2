// "Compute locally" end to end: a GGUF model picked in the page (the tiny llama.cpp oracle model
// crates/infer/tests/fixtures/llama-f32.gguf), read by the worker from the file (never uploaded),
// utilities computed for the UDCG anchor JSON on the CPU in the worker (this Chromium runs without
// WebGPU: the panel must say so and why), compared with llama.cpp's p(NO-RESPONSE) for the same
// passages (the fixture's udcg_anchor, which `ragscope utility` is checked against in
// crates/cli/tests/utility.rs, so page and CLI agree through the same oracle);
// the result loads as the utilities file; pause, resume and cancel; no long task on the UI thread.
// The WebGPU path: compute-webgpu.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import {
  startServer, launch, recordRequests, screenshot, shared, artifacts,
  observeLongTasks, longTasks,
} from './harness.mjs';

const fixtures = resolve(process.env.RAGSCOPE_INFER_FIXTURES ?? '../../crates/infer/tests/fixtures');
const MODEL = join(fixtures, 'llama-f32.gguf');
const UDCG = join(shared, 'data/udcg/dataset_with_scores.json');
/** The page computes in f32 like the CLI: same tolerance as the engine's own oracle tests. */
const P_REL_TOL = 2e-5;

let server, origin, browser;
before(async () => {
  ({ server, origin } = await startServer());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

async function openApp() {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const requests = recordRequests(page);
  await observeLongTasks(page);
  await page.goto(origin + '/?demo=0');
  await page.waitForSelector('#file-input', { state: 'attached' });
  return { page, errors, requests };
}

async function oracle() {
  const fx = JSON.parse(await readFile(join(fixtures, 'llama-f32.json'), 'utf8'));
  return new Map(fx.udcg_anchor.map((e) => [`${e.example_id}\t${e.doc_id}`, e.p_no_response]));
}

/** A UDCG JSON with many long passages (the anchor's questions, passages repeated), so a
 * computation lasts long enough to be paused and cancelled by clicks. */
async function bigUdcg() {
  const examples = JSON.parse(await readFile(UDCG, 'utf8'));
  const out = [];
  for (let copy = 0; copy < 20; copy++) {
    for (const ex of examples) {
      out.push({ ...ex, example_id: `${ex.example_id}-${copy}`,
        passages: ex.passages.map((p) => ({ ...p, text: `${p.text} `.repeat(8).trim() })) });
    }
  }
  await mkdir(artifacts, { recursive: true });
  const path = join(artifacts, 'udcg-big.json');
  await writeFile(path, JSON.stringify(out));
  return path;
}

async function loadModelAndData(page, udcg = UDCG) {
  await page.setInputFiles('#file-input', udcg);
  await page.waitForSelector('.file[data-kind="udcg-json"]', { timeout: 30_000 });
  await page.click('#compute summary');
  await page.setInputFiles('#model-file', MODEL);
  await page.waitForSelector('#compute-model', { timeout: 60_000 });
  await page.waitForSelector('#compute-gpu[data-webgpu="true"], #compute-gpu[data-webgpu="false"]', { timeout: 30_000 });
}

test('utilities computed in the page match llama.cpp (and so the CLI), and load as the utilities file', async () => {
  const { page, errors, requests } = await openApp();
  const blobFetches = [];
  page.on('request', (r) => {
    if (r.url().startsWith('blob:') && r.resourceType() === 'fetch') blobFetches.push(r.url());
  });
  await loadModelAndData(page);
  const info = await page.$eval('#compute-model', (e) => e.textContent);
  assert.match(info, /llama/);
  assert.deepEqual(await page.$$eval('.quant-mix tr[data-type]', (r) => r.map((x) => x.dataset.type)), ['F32']);
  const gpu = await page.$eval('#compute-gpu', (e) => e.textContent);
  assert.match(gpu, /WebGPU unavailable: .+ on the CPU in the worker/);

  const start = await page.evaluate(() => performance.now());
  await page.click('#compute-start');
  await page.waitForSelector('#compute-done', { timeout: 120_000 });
  const long = (await longTasks(page, start)).filter((t) => t.duration > 50);
  assert.deepEqual(long, [], `UI thread blocked > 50 ms while computing: ${JSON.stringify(long)}`);
  await page.waitForSelector('.file[data-kind="utilities"]', { timeout: 30_000 });
  // Never a silent fallback: the panel says the CPU ran, and why.
  const backend = await page.$eval('#compute-backend', (e) => ({ kind: e.dataset.backend, text: e.textContent }));
  assert.equal(backend.kind, 'cpu');
  assert.match(backend.text, /Computing on CPU \(in the worker, single-threaded\) — WebGPU cannot be used: /);
  assert.match(await page.$eval('#compute-done', (e) => e.textContent), /on CPU/);
  const mem = await page.$eval('#compute-memory', (e) => ({ wasm: Number(e.dataset.wasmBytes), gpu: Number(e.dataset.gpuBytes) }));
  console.log(`CPU in the worker: peak wasm memory ${(mem.wasm / 2 ** 20).toFixed(1)} MiB, GPU buffers ${mem.gpu} bytes`);
  assert.ok(mem.wasm > 0);
  assert.equal(mem.gpu, 0);
  // The page offers the model to the worker on a BroadcastChannel: no blob: URL was fetched
  // (fetching one made Chromium copy the whole model into a new Blob; the worker's own script
  // still comes from a blob: URL, as a script).
  assert.deepEqual(blobFetches, []);

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#compute-download')]);
  const tsv = await readFile(await download.path(), 'utf8');
  await mkdir(artifacts, { recursive: true });
  await writeFile(join(artifacts, 'computed-utilities.tsv'), tsv);
  const want = await oracle();
  const rows = tsv.trim().split('\n').slice(1).map((l) => l.split('\t'));
  assert.equal(rows.length, want.size, 'one row per passage');
  let worst = 0;
  for (const [qid, docno, relevant, p, model] of rows) {
    const w = want.get(`${qid}\t${docno}`);
    assert.ok(w !== undefined, `${qid}/${docno} not in the oracle`);
    const rel = Math.abs(Number(p) - w) / w;
    worst = Math.max(worst, rel);
    assert.ok(rel <= P_REL_TOL, `${qid}/${docno}: page ${p} vs llama.cpp ${w}`);
    assert.ok(relevant === '0' || relevant === '1');
    assert.equal(model, 'llama-f32');
  }
  console.log(`page vs llama.cpp: ${rows.length} passages, max rel Δp = ${worst.toExponential(2)}`);
  await screenshot(page, 'desktop-compute');
  // The model file never left the machine: no request beyond the app's own files and blob: URLs.
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:')), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('pause, resume and cancel', async () => {
  const { page, errors } = await openApp();
  await loadModelAndData(page, await bigUdcg());
  await page.click('#compute-start');
  await page.click('#compute-pause');
  await page.waitForSelector('#compute-resume', { timeout: 30_000 });
  await page.waitForFunction(() => /paused/.test(document.querySelector('#compute-progress')?.textContent ?? ''));
  const held = await page.$eval('#compute-progress', (e) => Number(e.dataset.done));
  await page.waitForTimeout(500);
  assert.equal(await page.$eval('#compute-progress', (e) => Number(e.dataset.done)), held, 'no passage computed while paused');
  assert.ok(held < 300, `paused after ${held} of 300`);
  await screenshot(page, 'desktop-compute-paused');
  await page.click('#compute-resume');
  await page.waitForSelector('#compute-done', { timeout: 300_000 });

  // A second run, cancelled at once: nothing new is kept, the first result stays loaded.
  await page.click('#compute-start');
  await page.click('#compute-cancel');
  await page.waitForSelector('#compute-progress', { state: 'detached', timeout: 30_000 });
  assert.equal(await page.$$eval('.file[data-kind="utilities"]', (f) => f.length), 1);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a file that is not a model is refused with its name, and nothing loaded is lost', async () => {
  const { page } = await openApp();
  await page.setInputFiles('#file-input', UDCG);
  await page.waitForSelector('.file[data-kind="udcg-json"]', { timeout: 30_000 });
  await page.click('#compute summary');
  await page.setInputFiles('#model-file', UDCG);
  await page.waitForFunction(() => [...document.querySelectorAll('.error-message')]
    .some((e) => /dataset_with_scores\.json.*not a GGUF file/.test(e.textContent)), null, { timeout: 30_000 });
  assert.equal(await page.$$eval('.file', (f) => f.length), 1);
  await page.close();
});
