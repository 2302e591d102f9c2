// The lost-in-the-middle page (#/learn/lost-in-the-middle) end to end: a small run (3 questions ×
// 3 positions) with the tiny llama.cpp oracle model (crates/infer/tests/fixtures/llama-f32.gguf)
// picked in the page, on the CPU in the worker and — where this Chromium has WebGPU (SwiftShader) —
// on the GPU. Its answers equal `ragscope answer`'s on the contexts the page exports, and its
// per-position nDCG, MAP, MRR, P (`ragscope eval`) and UDCG (`ragscope udcg`)
// equal the CLI's on the same contexts (qrels, one run per position and the utilities, written here
// from the page's export). No console error, no request off the page's origin; a reload restores the
// results from IndexedDB; axe-core finds no serious violation; screenshots at desktop and phone
// widths (target/e2e-artifacts/litm-*.png).
//
// The tiny model's window is 1,024 tokens: the run uses the first 3 bundled questions with their
// passages cut to 160 characters (given to the page as "your own questions"); the bundled data
// itself is checked to load (60 questions, 3 with the paper's distractors).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { startServer, launch, recordRequests, screenshot, artifacts, dist, WEBGPU_ARGS, skip } from './harness.mjs';

const fixtures = resolve(process.env.RAGSCOPE_INFER_FIXTURES ?? '../../crates/infer/tests/fixtures');
const MODEL = join(fixtures, 'llama-f32.gguf');
const CLI = resolve(process.env.RAGSCOPE_CLI ?? '../../target/debug/ragscope');
const K = 3;
const POSITIONS = [1, 2, 3];

let server, origin, browser;
before(async () => {
  ({ server, origin } = await startServer());
  browser = await launch(WEBGPU_ARGS);
});
after(async () => {
  await browser?.close();
  server?.close();
});

/** The first 3 bundled questions with 4 passages (the gold first) cut to 160 characters. */
async function smallQuestions() {
  const bundled = JSON.parse(await readFile(join(dist, 'learn/litm-nq.json'), 'utf8'));
  const questions = bundled.questions.slice(0, 3).map((q) => {
    const others = q.passages.filter((_, j) => j !== q.gold_index).slice(0, 3);
    return {
      qid: q.qid, question: q.question, answers: q.answers, gold_index: 0,
      passages: [q.passages[q.gold_index], ...others].map((p) => p.slice(0, 160)),
    };
  });
  await mkdir(artifacts, { recursive: true });
  const path = join(artifacts, 'litm-small.json');
  await writeFile(path, JSON.stringify({ source: 'e2e', questions }));
  return path;
}

async function openPage(context) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const requests = recordRequests(page);
  await page.goto(`${origin}/?demo=0#/learn/lost-in-the-middle`);
  await page.waitForSelector('#litm-data-note');
  return { page, errors, requests };
}

/** RFC 4180 CSV (quoted fields with doubled quotes) as rows of strings. */
function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}

async function download(page, button) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return readFile(await d.path(), 'utf8');
}

/** Sets up the small run and runs it on `backend`; the page's exports. */
async function run(page, backend) {
  await page.setInputFiles('#litm-data-file', await smallQuestions());
  await page.waitForFunction(() => /Your data — litm-small\.json: 3 questions/.test(
    document.querySelector('#litm-data-note')?.textContent ?? ''));
  await page.fill('#litm-k', String(K));
  await page.dispatchEvent('#litm-k', 'change');
  await page.selectOption('#litm-backend', backend);
  await page.setInputFiles('#litm-model', MODEL);
  await page.waitForSelector('#litm-model-info', { timeout: 60_000 });
  const checked = await page.$$eval('.litm-positions input:checked', (els) => els.map((e) => Number(e.id.replace('litm-pos-', ''))));
  assert.deepEqual(checked, POSITIONS);
  // The results survive a reload only where the user lets the browser keep them (#41).
  await page.check('#litm-keep');
  await page.click('#litm-run');
  await page.waitForFunction(() => /Done in/.test(document.querySelector('#litm-message')?.textContent ?? '')
    || document.querySelector('#litm-error'), null, { timeout: 300_000 });
  assert.equal(await page.$('#litm-error'), null, await page.$eval('#litm-error', (e) => e.textContent).catch(() => ''));
  const gpu = await page.$eval('#litm-backend-info', (e) => ({ gpu: e.dataset.gpu === 'true', text: e.textContent }));
  return {
    gpu,
    summary: parseCsv(await download(page, '#litm-export-csv')),
    items: parseCsv(await download(page, '#litm-export-items')),
    contexts: (await download(page, '#litm-export-cli')).trim().split('\n').map((l) => JSON.parse(l)),
  };
}

/** The CLI on the page's contexts: answers per (qid, position), and each position's metrics. */
function cli(contexts, dir) {
  const file = (name, text) => { const p = join(dir, name); execFileSync('sh', ['-c', `cat > '${p}'`], { input: text }); return p; };
  const input = file('contexts.jsonl', contexts.map((c) => JSON.stringify(c)).join('\n') + '\n');
  const out = join(dir, 'answers.jsonl');
  execFileSync('rm', ['-f', out]);
  execFileSync(CLI, ['answer', '--quiet', '--backend', 'cpu', '--max-new-tokens', '32', '--model', MODEL, input, '-o', out]);
  const answers = new Map();
  for (const line of execFileSync('cat', [out], { encoding: 'utf8' }).trim().split('\n')) {
    const q = JSON.parse(line);
    for (const c of q.contexts) answers.set(`${q.qid}@${c.position}`, c.answer);
  }
  let qrels = '', utilities = '';
  for (const q of contexts) {
    for (const [docno, p] of Object.entries(q.passages)) {
      qrels += `${q.qid} 0 ${docno} ${p.is_relevant ? 1 : 0}\n`;
      utilities += `${q.qid}\t${docno}\t${p.is_relevant ? 1 : 0}\t${p.no_res_prob}\te2e\n`;
    }
  }
  const qrelsFile = file('qrels.txt', qrels);
  const utilitiesFile = file('utilities.tsv', utilities);
  const metrics = new Map();
  for (const position of POSITIONS) {
    let runText = '';
    for (const q of contexts) {
      const c = q.contexts.find((x) => x.position === position);
      c.passages.forEach((d, i) => { runText += `${q.qid} Q0 ${d} ${i + 1} ${K - i} litm\n`; });
    }
    const runFile = file(`run-${position}.txt`, runText);
    const evalOut = JSON.parse(execFileSync(CLI, ['eval', '--qrels', qrelsFile, '--measures', `nDCG,MAP,MRR,P@${K}`, '--format', 'json', runFile], { encoding: 'utf8' }));
    const all = new Map(Object.entries(evalOut.runs[0].summary));
    const udcgOut = JSON.parse(execFileSync(CLI, ['udcg', '--qrels', qrelsFile, '--utilities', utilitiesFile, '--k', String(K), '--format', 'json', runFile], { encoding: 'utf8' }));
    all.set('UDCG', udcgOut.runs[0].summary[`UDCG@${K}`]);
    metrics.set(position, all);
  }
  return { answers, metrics };
}

function compareWithCli(t, label, got) {
  if (!existsSync(CLI)) {
    skip(t, `the CLI comparison (no ${CLI}; build it with cargo build -p ragscope-cli)`);
    return;
  }
  const dir = join(artifacts, `litm-cli-${label}`);
  execFileSync('mkdir', ['-p', dir]);
  const want = cli(got.contexts, dir);
  assert.equal(got.items.length, 9, '3 questions × 3 positions');
  for (const item of got.items) {
    assert.equal(item.answer, want.answers.get(`${item.qid}@${item.position}`), `${label}: answer of ${item.qid} at ${item.position}`);
  }
  // The same crates/eval code on the same contexts: equal up to the summation order of the mean.
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-12, `${label} ${what}: page ${a}, CLI ${b}`);
  for (const row of got.summary) {
    const m = want.metrics.get(Number(row.position));
    assert.equal(Number(row.questions), 3);
    close(Number(row.ndcg), m.get('nDCG'), `nDCG at ${row.position}`);
    close(Number(row.map), m.get('MAP'), `MAP at ${row.position}`);
    close(Number(row.mrr), m.get('MRR'), `MRR at ${row.position}`);
    close(Number(row.precision), m.get(`P@${K}`), `P at ${row.position}`);
    close(Number(row.udcg), m.get('UDCG'), `UDCG at ${row.position}`);
  }
  console.log(`${label}: 9 answers and 15 per-position metrics equal the CLI's`);
}

test('the bundled subset loads, and says how few questions keep the paper\'s distractors', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors, requests } = await openPage(context);
  const note = await page.$eval('#litm-data-note', (e) => e.textContent);
  assert.match(note, /60 NQ-open questions/);
  assert.match(note, /Only 3 of them keep the paper's own distractors/);
  assert.match(note, /not a replication/);
  assert.match(await page.$eval('#litm-not-yet', (e) => e.textContent), /Not yet/);
  assert.equal(await page.$$eval('#chart-litm-published polyline', (p) => p.length), 12, '4 models × (curve, closed-book, oracle)');
  // Key–value records generated in the page: 20 pairs, so k can reach 20.
  await page.click('#litm-kv');
  await page.waitForFunction(() => /key–value records \(20 pairs, seed 1\): 10 questions/.test(
    document.querySelector('#litm-data-note')?.textContent ?? ''));
  await page.fill('#litm-k', '20');
  await page.dispatchEvent('#litm-k', 'change');
  assert.deepEqual(await page.$$eval('.litm-positions input:checked', (els) => els.map((e) => e.id)),
    ['litm-pos-1', 'litm-pos-5', 'litm-pos-10', 'litm-pos-15', 'litm-pos-20']);
  assert.deepEqual(errors, []);
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')), []);
  await context.close();
});

test('a small run on the CPU equals the CLI, survives a reload, and is accessible', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const { page, errors, requests } = await openPage(context);
  const got = await run(page, 'cpu');
  assert.equal(got.gpu.gpu, false);
  assert.match(got.gpu.text, /CPU/);
  assert.equal(await page.$$eval('#litm-table tbody tr', (r) => r.length), 3);
  compareWithCli(t, 'cpu', got);
  await screenshot(page, 'litm-desktop');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'litm-phone');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways on a phone by ${overflow}px`);
  await page.setViewportSize({ width: 1280, height: 900 });

  // axe-core, injected as a script (the context bypasses the page's CSP for it only).
  const require = createRequire(import.meta.url);
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const result = await page.evaluate(async () => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  assert.deepEqual(bad, []);

  // A reload resumes: the same model and settings find all 9 results in IndexedDB.
  await page.reload();
  await page.waitForSelector('#litm-data-note');
  await page.setInputFiles('#litm-data-file', join(artifacts, 'litm-small.json'));
  await page.waitForFunction(() => /Your data — litm-small\.json/.test(document.querySelector('#litm-data-note')?.textContent ?? ''));
  await page.fill('#litm-k', String(K));
  await page.dispatchEvent('#litm-k', 'change');
  await page.setInputFiles('#litm-model', MODEL);
  await page.waitForSelector('#litm-cached', { timeout: 60_000 });
  assert.match(await page.$eval('#litm-cached', (e) => e.textContent), /^9 results restored/);
  assert.equal(await page.$eval('#litm-run', (b) => b.disabled), true, 'nothing left to compute');
  const again = parseCsv(await download(page, '#litm-export-items'));
  assert.deepEqual(again.map((i) => i.answer), got.items.map((i) => i.answer));

  // Progress with an ETA, and cancel: a longer run on key–value records (10 questions, k = 10).
  await page.click('#litm-kv');
  await page.waitForFunction(() => /key–value records/.test(document.querySelector('#litm-data-note')?.textContent ?? ''));
  await page.fill('#litm-k', '10');
  await page.dispatchEvent('#litm-k', 'change');
  await page.click('#litm-run');
  await page.waitForFunction(() => /^ *[1-9]\d* of \d+ steps, [\d.]+ s, about \d+ (s|min) left/.test(
    document.querySelector('#litm-progress span')?.textContent ?? ''), null, { timeout: 120_000 });
  await page.click('#litm-cancel');
  await page.waitForFunction(() => /Cancelled after \d+ steps/.test(document.querySelector('#litm-message')?.textContent ?? ''),
    null, { timeout: 60_000 });
  assert.equal(await page.$eval('#litm-run', (b) => b.disabled), false, 'the rest can be run later');

  assert.deepEqual(errors, []);
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')), []);
  await context.close();
});

test('the same run on WebGPU (SwiftShader) equals the CLI', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, errors, requests } = await openPage(context);
  // A fresh run: nothing from the CPU test's cache (same model and settings would restore it).
  await page.click('#litm-forget');
  const got = await run(page, 'gpu');
  if (!got.gpu.gpu) {
    skip(t, `the WebGPU run (no WebGPU adapter in this Chromium: ${got.gpu.text})`);
  } else {
    assert.match(got.gpu.text, /WebGPU/);
    compareWithCli(t, 'webgpu', got);
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')), []);
  await context.close();
});
