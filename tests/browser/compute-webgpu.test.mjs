// "Compute locally" on WebGPU: headless Chromium with WebGPU on SwiftShader (no GPU needed; the
// flags of tests/wasm/webdriver.json), the tiny llama.cpp oracle model picked in the page, the
// weights uploaded once to the worker's WebGPU device and the utilities computed there:
// * for the UDCG anchor JSON, equal to `ragscope utility --backend cpu` (the CLI's CPU engine)
//   and to llama.cpp's p(NO-RESPONSE) within 1e-4 relative; a second run reuses the uploaded
//   weights;
// * for a run + passages (the anchor's passages as a TREC run, topics TSV, passages JSONL and
//   qrels: `ragscope utility`'s run mode), top 3 per query, equal to the CLI's run mode;
// (a device lost mid-run is tested in tests/wasm/tests/compute_gpu_recovery.rs);
// the panel says which backend ran and why, and the peak memory (printed here); no long task
// on the UI thread; no request beyond the page's origin. Without a WebGPU adapter in this
// Chromium the tests print `SKIPPED:` and assert nothing about the GPU.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import {
  startServer, launch, recordRequests, screenshot, shared, artifacts,
  observeLongTasks, longTasks, WEBGPU_ARGS, skip,
} from './harness.mjs';

const fixtures = resolve(process.env.RAGSCOPE_INFER_FIXTURES ?? '../../crates/infer/tests/fixtures');
const MODEL = join(fixtures, 'llama-f32.gguf');
const UDCG = join(shared, 'data/udcg/dataset_with_scores.json');
const CLI = resolve(process.env.RAGSCOPE_CLI ?? '../../target/debug/ragscope');
/** WebGPU vs the CPU engine (the CLI) and vs llama.cpp on this F32 model (issue 10 §2). */
const REL_TOL = 1e-4;

let server, origin, browser;
before(async () => {
  ({ server, origin } = await startServer());
  browser = await launch(WEBGPU_ARGS);
});
after(async () => {
  await browser?.close();
  server?.close();
});

async function openApp(viewport = { width: 1280, height: 1000 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const requests = recordRequests(page);
  await observeLongTasks(page);
  await page.goto(origin + '/?demo=0');
  await page.waitForSelector('#file-input', { state: 'attached' });
  return { page, errors, requests };
}

/** Loads `files` and the model; false (after printing SKIPPED) when the worker has no WebGPU. */
async function loadModelAndData(t, page, files, kind) {
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction((n) => document.querySelectorAll('.file[data-kind]').length >= n,
    files.length, { timeout: 30_000 });
  if (kind) await page.waitForSelector(`.file[data-kind="${kind}"]`, { timeout: 30_000 });
  await page.click('#compute summary');
  await page.setInputFiles('#model-file', MODEL);
  await page.waitForSelector('#compute-model', { timeout: 60_000 });
  await page.waitForSelector('#compute-gpu[data-webgpu="true"], #compute-gpu[data-webgpu="false"]', { timeout: 30_000 });
  // SwiftShader is a software adapter, which "WebGPU on a GPU, else CPU" passes by: ask for it.
  if (await page.$('#compute-gpu[data-webgpu="true"]')) {
    await page.selectOption('#compute-backend-choice', 'gpu');
    return true;
  }
  const why = await page.$eval('#compute-gpu', (e) => e.textContent);
  skip(t, `no WebGPU adapter in this Chromium (${why})`);
  return false;
}

async function llamaCpp() {
  const fx = JSON.parse(await readFile(join(fixtures, 'llama-f32.json'), 'utf8'));
  return new Map(fx.udcg_anchor.map((e) => [`${e.example_id}\t${e.doc_id}`, e.p_no_response]));
}

/** `ragscope utility --backend cpu` on the UDCG JSON: (example_id, doc_id) → p; null without the CLI. */
async function cliUdcg(t) {
  if (!existsSync(CLI)) {
    skip(t, `the CLI comparison (no ${CLI}; build it with cargo build -p ragscope-cli)`);
    return null;
  }
  await mkdir(artifacts, { recursive: true });
  const out = join(artifacts, 'cli-utilities.json');
  execFileSync(CLI, ['utility', '--model', MODEL, '--model-name', 'e2e', '--backend', 'cpu', '--quiet',
    UDCG, '-o', out]);
  const data = JSON.parse(await readFile(out, 'utf8'));
  const map = new Map();
  for (const ex of data) {
    for (const p of ex.passages) map.set(`${ex.example_id}\t${p.doc_id}`, p.models_info.e2e.no_res_prob);
  }
  return map;
}

/** The anchor's passages as run-mode inputs (as crates/cli/tests/utility.rs builds them):
 * passage i of each question ranked i + 1 with score 10 − i. */
async function runInputs() {
  const examples = JSON.parse(await readFile(UDCG, 'utf8'));
  let topics = '', passages = '', qrels = '', run = '';
  for (const ex of examples) {
    topics += `${ex.example_id}\t${ex.question}\n`;
    ex.passages.forEach((p, i) => {
      passages += JSON.stringify({ docno: p.doc_id, text: p.text }) + '\n';
      qrels += `${ex.example_id} 0 ${p.doc_id} ${p.is_relevant ? 1 : 0}\n`;
      run += `${ex.example_id} Q0 ${p.doc_id} ${i + 1} ${10 - i} e2e\n`;
    });
  }
  const dir = join(artifacts, 'run-inputs');
  await mkdir(dir, { recursive: true });
  const files = { topics: join(dir, 'topics.tsv'), passages: join(dir, 'passages.jsonl'),
    qrels: join(dir, 'qrels.txt'), run: join(dir, 'run.txt') };
  await writeFile(files.topics, topics);
  await writeFile(files.passages, passages);
  await writeFile(files.qrels, qrels);
  await writeFile(files.run, run);
  return files;
}

/** `ragscope utility --backend cpu` in run mode: (qid, docno) → [relevant, p]; null without the CLI. */
function cliRun(t, files, k) {
  if (!existsSync(CLI)) {
    skip(t, `the CLI comparison (no ${CLI})`);
    return null;
  }
  const out = join(artifacts, `cli-run-top${k}.tsv`);
  execFileSync('rm', ['-f', out]);
  execFileSync(CLI, ['utility', '--model', MODEL, '--backend', 'cpu', '--quiet', '--topics', files.topics,
    '--passages', files.passages, '--qrels', files.qrels, '--run', files.run, '--k', String(k), '-o', out]);
  return readFile(out, 'utf8').then((t) => new Map(t.trim().split('\n').slice(1)
    .map((l) => l.split('\t')).map(([q, d, r, p]) => [`${q}\t${d}`, [r, Number(p)]])));
}

async function computeAndDownload(page, name) {
  const start = await page.evaluate(() => performance.now());
  await page.click('#compute-start');
  await page.waitForSelector('#compute-done', { timeout: 300_000 });
  const long = (await longTasks(page, start)).filter((t) => t.duration > 50);
  assert.deepEqual(long, [], `UI thread blocked > 50 ms while computing: ${JSON.stringify(long)}`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#compute-download')]);
  const tsv = await readFile(await download.path(), 'utf8');
  await mkdir(artifacts, { recursive: true });
  await writeFile(join(artifacts, name), tsv);
  return tsv.trim().split('\n').slice(1).map((l) => l.split('\t'));
}

function relDiff(a, b) {
  return Math.abs(a - b) / Math.abs(b);
}

async function memoryLine(page, label) {
  const m = await page.$eval('#compute-memory', (e) => ({
    wasm: Number(e.dataset.wasmBytes), gpu: Number(e.dataset.gpuBytes), text: e.textContent }));
  console.log(`${label}: peak worker wasm memory ${(m.wasm / 2 ** 20).toFixed(1)} MiB, GPU buffers ${(m.gpu / 2 ** 20).toFixed(2)} MiB`);
  return m;
}

test('WebGPU computes the UDCG file\'s utilities equal to the CLI\'s CPU engine and llama.cpp; the weights are reused', async (t) => {
  const { page, errors, requests } = await openApp();
  if (!await loadModelAndData(t, page, [UDCG], 'udcg-json')) return page.close();
  const gpu = await page.$eval('#compute-gpu', (e) => e.textContent);
  assert.match(gpu, /WebGPU adapter: .*shader-f16: (yes|no)/);
  assert.match(gpu, /maxStorageBufferBindingSize: \d+/);

  const rows = await computeAndDownload(page, 'computed-utilities-webgpu.tsv');
  const backend = await page.$eval('#compute-backend', (e) => ({ kind: e.dataset.backend, text: e.textContent }));
  assert.equal(backend.kind, 'gpu', backend.text);
  assert.match(backend.text, /Computing on WebGPU: .*were uploaded once/);
  assert.match(await page.$eval('#compute-done', (e) => e.textContent), /on WebGPU: /);
  const mem = await memoryLine(page, 'UDCG on WebGPU');
  assert.ok(mem.wasm > 0 && mem.gpu > 0, mem.text);

  const oracle = await llamaCpp();
  const cli = await cliUdcg(t);
  assert.equal(rows.length, oracle.size, 'one row per passage');
  let worstCli = 0, worstLlama = 0;
  for (const [qid, docno, , p] of rows) {
    const key = `${qid}\t${docno}`;
    worstLlama = Math.max(worstLlama, relDiff(Number(p), oracle.get(key)));
    if (cli) worstCli = Math.max(worstCli, relDiff(Number(p), cli.get(key)));
  }
  console.log(`WebGPU vs llama.cpp: ${rows.length} passages, max rel Δp = ${worstLlama.toExponential(2)}`);
  if (cli) console.log(`WebGPU vs ragscope utility --backend cpu: max rel Δp = ${worstCli.toExponential(2)}`);
  assert.ok(worstLlama <= REL_TOL, `WebGPU vs llama.cpp ${worstLlama}`);
  assert.ok(worstCli <= REL_TOL, `WebGPU vs the CLI's CPU engine ${worstCli}`);
  await screenshot(page, 'desktop-compute-webgpu');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'phone-compute-webgpu');
  await page.setViewportSize({ width: 1280, height: 1000 });

  // A second run: the weights stay on the GPU (the first run's #compute-done is still shown, so
  // wait for the new run's backend line and for its progress to end).
  await page.click('#compute-start');
  await page.waitForFunction(() => /are still on the GPU/.test(document.querySelector('#compute-backend')?.textContent ?? ''),
    null, { timeout: 120_000 });
  await page.waitForSelector('#compute-progress', { state: 'detached', timeout: 300_000 });
  assert.equal(await page.$eval('#compute-backend', (e) => e.dataset.backend), 'gpu');

  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:')), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('run + passages (TREC run, topics, passages JSONL, qrels): the top 3 per query on WebGPU equal the CLI\'s run mode', async (t) => {
  const { page, errors, requests } = await openApp();
  const files = await runInputs();
  if (!await loadModelAndData(t, page, [files.topics, files.passages, files.qrels, files.run], 'run')) return page.close();
  for (const kind of ['topics', 'passages', 'qrels', 'run']) {
    assert.equal(await page.$$eval(`.file[data-kind="${kind}"]`, (f) => f.length), 1, kind);
  }
  const value = await page.$$eval('#compute-source option', (os) => os.find((o) => o.textContent.startsWith('run.txt')).value);
  await page.selectOption('#compute-source', value);
  await page.fill('#compute-k', '3');
  await page.$eval('#compute-k', (e) => e.dispatchEvent(new Event('change', { bubbles: true })));
  const rows = await computeAndDownload(page, 'computed-utilities-run-webgpu.tsv');
  assert.equal(await page.$eval('#compute-backend', (e) => e.dataset.backend), 'gpu');
  assert.equal(await page.$eval('#compute-done', (e) => e.dataset.file), 'utilities-llama-f32-run-top3.tsv');
  await page.waitForSelector('.file[data-kind="utilities"]', { timeout: 30_000 });
  await memoryLine(page, 'run top 3 on WebGPU');

  const oracle = await llamaCpp();
  const cli = await cliRun(t, files, 3);
  const examples = JSON.parse(await readFile(UDCG, 'utf8'));
  assert.equal(rows.length, 3 * examples.length);
  let worst = 0;
  for (const [qid, docno, relevant, p] of rows) {
    const key = `${qid}\t${docno}`;
    assert.ok(relDiff(Number(p), oracle.get(key)) <= REL_TOL, `${key}: ${p} vs llama.cpp ${oracle.get(key)}`);
    if (cli) {
      const [rel, want] = cli.get(key) ?? [];
      assert.ok(want !== undefined, `${key} is not in the CLI's top 3`);
      assert.equal(relevant, rel, `${key}: relevance`);
      worst = Math.max(worst, relDiff(Number(p), want));
    }
  }
  if (cli) {
    assert.equal(cli.size, rows.length);
    console.log(`run mode, WebGPU vs ragscope utility --backend cpu: ${rows.length} passages, max rel Δp = ${worst.toExponential(2)}`);
    assert.ok(worst <= REL_TOL, `${worst}`);
  }
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:')), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('"WebGPU on a GPU, else CPU" passes a software adapter by and says so', async (t) => {
  const { page, errors } = await openApp();
  if (!await loadModelAndData(t, page, [UDCG], 'udcg-json')) return page.close();
  await page.selectOption('#compute-backend-choice', 'auto');
  await page.click('#compute-start');
  await page.waitForSelector('#compute-done', { timeout: 120_000 });
  const backend = await page.$eval('#compute-backend', (e) => ({ kind: e.dataset.backend, text: e.textContent }));
  const adapter = await page.$eval('#compute-gpu', (e) => e.textContent);
  if (/swiftshader/i.test(adapter)) {
    assert.equal(backend.kind, 'cpu', backend.text);
    assert.match(backend.text, /only WebGPU adapter is a CPU emulation/);
  } else {
    skip(t, `the adapter is not SwiftShader (${adapter})`);
  }
  assert.deepEqual(errors, []);
  await page.close();
});
