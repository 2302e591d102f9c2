// "Answer the contexts" end to end (issue 14 §3: `ragscope answer` in the app): the tiny llama.cpp
// oracle model (crates/infer/tests/fixtures/llama-f32.gguf) picked in the page answers the
// contexts of the CLI's answer fixture (crates/cli/tests/fixtures/answer) in the worker, with
// gold answers set to llama.cpp's greedy answer of each question's first context (so outcomes
// differ: that context holds the relevant passage and is correct, the others are wrong, one by
// the paper's rule) and no outcomes in the input:
// * every answer equals llama.cpp's (tests/oracle/generate_decode.py's fixture), and the page's
//   download equals `ragscope answer`'s file byte for byte (the CLI run from this test);
// * the answered file becomes the loaded context sets and the RAG tab's correlation study equals
//   `ragscope correlate` on the CLI's file;
// * pause (nothing answered while paused, nothing lost), resume, cancel (nothing kept);
// * on WebGPU (SwiftShader) the answers equal the CLI's CPU answers (SKIPPED without an adapter);
// no long task on the UI thread; no request beyond the page's origin and blob: URLs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile, mkdir, rm } from 'node:fs/promises';
import {
  startServer, launch, recordRequests, screenshot, artifacts,
  observeLongTasks, longTasks, WEBGPU_ARGS, skip,
} from './harness.mjs';

const fixtures = resolve(process.env.RAGSCOPE_INFER_FIXTURES ?? '../../crates/infer/tests/fixtures');
const ANSWER_FIXTURES = resolve('../../crates/cli/tests/fixtures/answer');
const MODEL = join(fixtures, 'llama-f32.gguf');
const CLI = resolve(process.env.RAGSCOPE_CLI ?? '../../target/debug/ragscope');
const DIR = join(artifacts, 'compute-answers');

let server, origin;
before(async () => {
  ({ server, origin } = await startServer());
  await mkdir(DIR, { recursive: true });
});
after(() => server?.close());

async function expected() {
  return JSON.parse(await readFile(join(ANSWER_FIXTURES, 'expected.json'), 'utf8'));
}

/** The fixture's contexts without outcomes, gold = llama.cpp's answer of context 0, distinct
 * no_res_prob per passage; `copies` > 1 repeats the questions under new qids. */
async function contextsFile(name, copies = 1) {
  const exp = await expected();
  const gold = new Map(exp.answers.filter((a) => a.context === 0).map((a) => [a.qid, a.answer]));
  const probs = { d1: 0.1, d2: 0.9, d3: 0.6, d4: 0.2, d5: 0.7, d6: 0.95 };
  const text = await readFile(join(ANSWER_FIXTURES, 'contexts.jsonl'), 'utf8');
  const lines = [];
  for (let c = 0; c < copies; c++) {
    for (const line of text.trim().split('\n')) {
      const q = JSON.parse(line);
      if (copies > 1) q.qid = `${q.qid}-${c}`;
      q.answers = [gold.get(q.qid.split('-')[0])];
      for (const [id, p] of Object.entries(q.passages)) p.no_res_prob = probs[id];
      for (const ctx of q.contexts) delete ctx.outcome;
      lines.push(JSON.stringify(q));
    }
  }
  const path = join(DIR, name);
  await writeFile(path, lines.join('\n') + '\n');
  return path;
}

/** `ragscope answer --backend cpu` on `input`: its output file's text; null without the CLI. */
async function cliAnswer(t, input, extra = []) {
  if (!existsSync(CLI)) {
    skip(t, `the CLI comparison (no ${CLI}; build it with cargo build -p ragscope-cli)`);
    return null;
  }
  const out = `${input}.cli.jsonl`;
  await rm(out, { force: true });
  execFileSync(CLI, ['answer', '--quiet', '--backend', 'cpu', '--max-new-tokens', '32', ...extra,
    '--model', MODEL, input, '-o', out]);
  return readFile(out, 'utf8');
}

async function openApp(browser) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const requests = recordRequests(page);
  await observeLongTasks(page);
  await page.goto(origin + '/?demo=0');
  await page.waitForSelector('#file-input', { state: 'attached' });
  return { page, errors, requests };
}

async function loadContextsAndModel(page, contexts) {
  await page.setInputFiles('#file-input', contexts);
  await page.waitForSelector('.file[data-kind="contexts"]', { timeout: 30_000 });
  await page.click('#compute summary');
  await page.setInputFiles('#model-file', MODEL);
  await page.waitForSelector('#compute-model', { timeout: 60_000 });
  await page.waitForSelector('#compute-gpu[data-webgpu="true"], #compute-gpu[data-webgpu="false"]', { timeout: 30_000 });
  await page.$eval('#answer-max-new', (e) => {
    e.value = '32';
    e.dispatchEvent(new Event('change', { bubbles: true }));
  });
}

async function answerAndDownload(page, timeout = 300_000) {
  const start = await page.evaluate(() => performance.now());
  await page.click('#answer-start');
  await page.waitForSelector('#answer-done', { timeout });
  const long = (await longTasks(page, start)).filter((t) => t.duration > 50);
  assert.deepEqual(long, [], `UI thread blocked > 50 ms while answering: ${JSON.stringify(long)}`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#answer-download')]);
  return readFile(await download.path(), 'utf8');
}

const parse = (jsonl) => jsonl.trim().split('\n').map((l) => JSON.parse(l));

function assertLlamaCpp(lines, exp) {
  for (const want of exp.answers) {
    const q = lines.find((l) => l.qid === want.qid);
    assert.ok(q, `${want.qid} answered`);
    assert.equal(q.contexts[want.context].answer, want.answer, `${want.qid} context ${want.context} vs llama.cpp`);
    assert.equal(q.model, 'llama-f32');
  }
}

/** `ragscope correlate`'s mean Spearman per metric (its table's first column). */
function cliCorrelate(file) {
  const text = execFileSync(CLI, ['correlate', file], { encoding: 'utf8' });
  const rows = new Map();
  for (const line of text.split('\n')) {
    const m = line.match(/^(\S+)\s+(-?\d\.\d{3})\*?\s+\[/);
    if (m) rows.set(m[1], m[2]);
  }
  return rows;
}

test('answers computed in the page equal llama.cpp and `ragscope answer`, and feed the correlation study', async (t) => {
  const browser = await launch();
  const { page, errors, requests } = await openApp(browser);
  const input = await contextsFile('contexts.jsonl');
  await loadContextsAndModel(page, input);
  assert.match(await page.$eval('.file[data-kind="contexts"]', (e) => e.textContent), /without outcomes/);
  await page.check('#answer-erag');
  const jsonl = await answerAndDownload(page);
  await writeFile(join(DIR, 'page-answers.jsonl'), jsonl);
  // Never a silent fallback: the panel says the CPU decoded, and why.
  const backend = await page.$eval('#answer-backend', (e) => ({ kind: e.dataset.backend, text: e.textContent }));
  assert.equal(backend.kind, 'cpu');
  assert.match(backend.text, /Answering on CPU \(in the worker, single-threaded\) — WebGPU cannot be used: /);

  const lines = parse(jsonl);
  assertLlamaCpp(lines, await expected());
  const outcomes = lines.flatMap((l) => l.contexts.map((c) => c.outcome));
  // Context 0 of each question holds the relevant passage and answers the gold: correct; the
  // context without a relevant passage (1) is wrong by the paper's rule.
  assert.deepEqual(outcomes, ['correct', 'wrong', 'wrong', 'correct', 'wrong', 'wrong']);
  const shown = await page.$eval('#answer-done #answer-outcomes', (e) => [e.dataset.correct, e.dataset.abstain, e.dataset.wrong]);
  assert.deepEqual(shown, ['2', '0', '4']);
  const cli = await cliAnswer(t, input, ['--erag']);
  if (cli !== null) assert.equal(jsonl, cli, 'the page writes ragscope answer\'s file byte for byte');
  await screenshot(page, 'desktop-compute-answers');

  // The answered file is the loaded context sets: the study is in the RAG tab.
  await page.waitForSelector('.file[data-kind="contexts"][data-file="answers-llama-f32-contexts.jsonl"]', { timeout: 30_000 });
  await page.click('#tab-rag');
  await page.waitForSelector('table.study tbody tr', { timeout: 30_000 });
  const study = await page.$$eval('table.study tbody tr', (rows) => rows.map((r) =>
    [r.querySelector('th').textContent, r.querySelector('td').textContent]));
  assert.ok(study.some(([m]) => m === 'UDCG') && study.some(([m]) => m === 'nDCG'), JSON.stringify(study));
  if (cli !== null) {
    const want = cliCorrelate(join(DIR, 'contexts.jsonl.cli.jsonl'));
    let compared = 0;
    for (const [metric, rho] of study) {
      if (!want.has(metric)) continue;
      assert.equal(rho, want.get(metric), `${metric}: page ρ vs ragscope correlate`);
      compared++;
    }
    assert.ok(compared >= 8, `compared ${compared} metrics with ragscope correlate`);
  }
  await screenshot(page, 'desktop-compute-answers-study');
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:')), []);
  assert.deepEqual(errors, []);
  await browser.close();
});

test('answers: pause keeps everything, resume finishes, cancel keeps nothing', async () => {
  const browser = await launch();
  const { page, errors } = await openApp(browser);
  const copies = 40;
  await loadContextsAndModel(page, await contextsFile('contexts-big.jsonl', copies));
  await page.click('#answer-start');
  await page.click('#answer-pause');
  await page.waitForSelector('#answer-resume', { timeout: 30_000 });
  await page.waitForFunction(() => /paused/.test(document.querySelector('#answer-progress')?.textContent ?? ''));
  const held = await page.$eval('#answer-progress', (e) => Number(e.dataset.done));
  await page.waitForTimeout(500);
  assert.equal(await page.$eval('#answer-progress', (e) => Number(e.dataset.done)), held, 'nothing answered while paused');
  assert.ok(held < copies * 6, `paused after ${held} of ${copies * 6}`);
  await screenshot(page, 'desktop-compute-answers-paused');
  await page.click('#answer-resume');
  await page.waitForSelector('#answer-done', { timeout: 600_000 });
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#answer-download')]);
  const lines = parse(await readFile(await download.path(), 'utf8'));
  // Nothing lost across the pause: every copy of a question has llama.cpp's answers.
  assert.equal(lines.length, copies * 2);
  const exp = await expected();
  for (const l of lines) {
    for (const want of exp.answers.filter((a) => a.qid === l.qid.split('-')[0])) {
      assert.equal(l.contexts[want.context].answer, want.answer, `${l.qid} context ${want.context}`);
    }
  }

  // A second run, cancelled at once: nothing new is kept, the answered file stays loaded.
  await page.click('#answer-start');
  await page.click('#answer-cancel');
  await page.waitForSelector('#answer-progress', { state: 'detached', timeout: 30_000 });
  assert.equal(await page.$$eval('.file[data-kind="contexts"]', (f) => f.length), 1);
  assert.deepEqual(errors, []);
  await browser.close();
});

test('answers on WebGPU (SwiftShader) equal the CLI\'s CPU answers', async (t) => {
  const browser = await launch(WEBGPU_ARGS);
  const { page, errors, requests } = await openApp(browser);
  const input = await contextsFile('contexts-gpu.jsonl');
  await loadContextsAndModel(page, input);
  if (!(await page.$('#compute-gpu[data-webgpu="true"]'))) {
    skip(t, `no WebGPU adapter in this Chromium (${await page.$eval('#compute-gpu', (e) => e.textContent)})`);
    await browser.close();
    return;
  }
  // SwiftShader is a software adapter, which "WebGPU on a GPU, else CPU" passes by: ask for it.
  await page.selectOption('#compute-backend-choice', 'gpu');
  const jsonl = await answerAndDownload(page);
  const backend = await page.$eval('#answer-backend', (e) => ({ kind: e.dataset.backend, text: e.textContent }));
  assert.equal(backend.kind, 'gpu', backend.text);
  assert.match(backend.text, /Answering on WebGPU: /);
  assertLlamaCpp(parse(jsonl), await expected());
  const cli = await cliAnswer(t, input);
  if (cli !== null) assert.equal(jsonl, cli, 'WebGPU answers = the CLI\'s CPU answers, byte for byte');
  await screenshot(page, 'desktop-compute-answers-webgpu');
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:')), []);
  assert.deepEqual(errors, []);
  await browser.close();
});
