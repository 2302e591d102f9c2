// A large run read in two places (crates/worker/src/engine/split_run.rs, crates/worker/src/engine/shard.rs): the worker
// parses and scores the first part while its helper worker does the rest, cut at a topic
// boundary. Checked against `ragscope trec-eval` on the same files: the numbers shown after the
// load, the whole run afterwards (another measure, the last topic's ranking), and the cases
// the cut cannot serve (a topic on both sides, a bad line in the helper's part), which must
// read the file again whole and show what one parse shows; and a helper that had to hold its part
// whole, which is replaced by a fresh one that serves the next run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startServer, launch, observeLongTasks, longTasks } from './harness.mjs';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
const dir = join(root, 'target/e2e-split');
const cli = join(root, 'target/release/ragscope');
const TOPICS = 330;
const DOCS = 1000;
let server, origin, browser;

/** A run of TOPICS x DOCS lines written topic by topic (~10 MB: above the split's 8 MiB). */
function runLines() {
  const lines = [];
  for (let t = 0; t < TOPICS; t++) {
    for (let r = 1; r <= DOCS; r++) {
      // ties on purpose: trec_eval breaks them by docno
      const score = (((t * 31 + r * 17) % 997) / 10).toFixed(1);
      lines.push(`q${t} Q0 d${t}-${r} ${r} ${score} split${t % 3}`);
    }
  }
  return lines;
}

const LONG_DOCS = 5000;

/** See `files.interleaved`. */
function interleavedText() {
  const line = (t, r) => `q${t} Q0 d${t}-${r} ${r} ${(((t * 31 + r * 17) % 997) / 10).toFixed(1)} split${t % 3}`;
  const parts = [];
  for (let t = 0; t < 200; t++) {
    const lines = [];
    for (let r = 1; r <= LONG_DOCS; r++) lines.push(line(t, r));
    parts.push(lines.join('\n'));
  }
  for (let t = 200; t < TOPICS; t += 2) {
    const lines = [];
    for (let r = 1; r <= LONG_DOCS; r++) lines.push(line(t, r), line(t + 1, r));
    parts.push(lines.join('\n'));
  }
  return parts.join('\n') + '\n';
}

function qrelsText() {
  const lines = [];
  for (let t = 0; t < TOPICS; t++) {
    for (let k = 0; k < 40; k++) lines.push(`q${t} 0 d${t}-${k * 23 + 1} ${k % 3}`);
  }
  return lines.join('\n') + '\n';
}

const files = {};

before(async () => {
  await mkdir(dir, { recursive: true });
  const lines = runLines();
  files.qrels = join(dir, 'split.qrels');
  await writeFile(files.qrels, qrelsText());
  files.run = join(dir, 'split.run');
  await writeFile(files.run, lines.join('\n') + '\n');
  // topic q0's first line moved to the end: on both sides of any cut
  files.comeback = join(dir, 'comeback.run');
  await writeFile(files.comeback, [...lines.slice(1), lines[0]].join('\n') + '\n');
  // a bad score at three quarters of the file: in the helper's part
  const bad = Math.floor(lines.length * 3 / 4);
  files.badLine = bad + 1;
  files.broken = join(dir, 'broken.run');
  await writeFile(files.broken, [...lines.slice(0, bad), 'q7 Q0 dX 1 high split', ...lines.slice(bad)].join('\n') + '\n');
  // ~56 MB, topics of 5,000 results: q0..q199 written topic by topic (past the cut at about
  // half the file), then q200..q329 in pairs whose lines alternate. The helper's part then has
  // topics that come back: it holds the part whole, which grows its memory past the limit.
  files.interleaved = join(dir, 'interleaved.run');
  await writeFile(files.interleaved, interleavedText());
  execFileSync('cargo', ['build', '--release', '-p', 'ragscope-cli'], { cwd: root, stdio: 'inherit' });
  assert.ok(existsSync(cli), `no ${cli}`);
  ({ server, origin } = await startServer());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

const MEASURES = ['ndcg_cut.10', 'map', 'recip_rank', 'P.10', 'recall.100', 'bpref'];

/** `ragscope trec-eval`'s summary line values by measure name. */
function cliSummary(run) {
  const args = ['trec-eval', ...MEASURES.flatMap((m) => ['-m', m]), files.qrels, run];
  const out = execFileSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  return new Map(out.trim().split('\n').map((l) => l.split('\t').map((s) => s.trim()))
    .filter((f) => f[1] === 'all').map((f) => [f[0], f[2]]));
}

async function shownValues(page, run) {
  return page.$$eval(`#results tr[data-run="${run}"] td[data-trec]`, (tds) =>
    Object.fromEntries(tds.filter((td) => td.dataset.trec).map((td) => [td.dataset.trec, td.querySelector('.v').textContent.trim()])));
}

/** The app with the qrels loaded and evaluated, then `run` picked; the load's phases. */
async function load(run, name, extra = '') {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await observeLongTasks(page);
  await page.goto(`${origin}/?demo=0&measures=nDCG@10,MAP,MRR,P@10,R@100${extra}`);
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.setInputFiles('#file-input', files.qrels);
  await page.waitForSelector('.file[data-kind="qrels"]', { timeout: 60_000 });
  await page.waitForFunction(() => !document.querySelector('#eval-progress'));
  const since = await page.evaluate(() => performance.now());
  await page.setInputFiles('#file-input', run);
  const phases = async () => page.evaluate((name) => {
    const load = (window.ragscopeTimings ?? []).filter((t) => t.what === `load ${name}`).pop();
    return load ? load.phases.map(([what]) => what) : null;
  }, name);
  return { page, errors, phases, since };
}

test('a large run is read in two places and shows the whole run\'s numbers', { timeout: 300_000 }, async () => {
  const expected = cliSummary(files.run);
  const { page, errors, phases, since } = await load(files.run, 'split.run');
  await page.waitForSelector('#results tbody tr[data-run="split.run"]', { timeout: 120_000 });
  const loadPhases = await phases();
  assert.ok(loadPhases?.some((p) => p.startsWith('cut at byte')), `not read in two places: ${loadPhases}`);
  assert.ok(!loadPhases.some((p) => p.startsWith('read again whole')), `${loadPhases}`);
  const shown = await shownValues(page, 'split.run');
  assert.equal(Object.keys(shown).length, 5);
  for (const [name, value] of Object.entries(shown)) assert.equal(value, expected.get(name), name);
  assert.match(await page.textContent('.file[data-kind="run"]'), new RegExp(`${TOPICS} topics, ${TOPICS * DOCS} results`));
  // the tail, parsed after the report: the last topic (the helper's part) ranked as trec_eval
  // ranks it, and another measure over the whole run
  await page.waitForFunction((name) => (window.ragscopeTimings ?? []).some((t) => t.what.startsWith(`tail ${name}`)), 'split.run');
  await page.click('#tab-topic');
  const last = `q${TOPICS - 1}`;
  await page.fill('#topic-id', last);
  await page.dispatchEvent('#topic-id', 'change');
  await page.waitForFunction((q) => document.querySelector('#topic-table') && [...document.querySelectorAll('.hint')].some((h) => h.textContent.includes(`on topic ${q}:`)), last);
  const top = await page.$$eval('#topic-table tbody tr', (rows) => rows.slice(0, 3).map((r) => r.children[1].textContent));
  const ranked = runLines().filter((l) => l.startsWith(`${last} `)).map((l) => l.split(' '))
    .sort((a, b) => Number(b[4]) - Number(a[4]) || (a[2] < b[2] ? 1 : a[2] > b[2] ? -1 : 0)).map((f) => f[2]);
  assert.deepEqual(top, ranked.slice(0, 3));
  assert.match(await page.textContent('#tab-panel, main'), new RegExp(`${DOCS - 100} more retrieved`));
  await page.click('#tab-scores');
  await page.click('.chip.add');
  await page.fill('#measure-search', 'bpref');
  await page.press('#measure-search', 'Enter');
  await page.waitForSelector('#results tr[data-run="split.run"] td[data-trec="bpref"]');
  assert.equal((await shownValues(page, 'split.run')).bpref, expected.get('bpref'));
  const worst = (await longTasks(page, since)).reduce((m, t) => Math.max(m, t.duration), 0);
  assert.ok(worst <= 50, `UI thread blocked ${worst} ms`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a helper that held its part whole is replaced, and the next run read in two places is right', { timeout: 300_000 }, async () => {
  const expected = cliSummary(files.interleaved);
  const { page, errors, phases } = await load(files.interleaved, 'interleaved.run');
  await page.waitForSelector('#results tbody tr[data-run="interleaved.run"]', { timeout: 120_000 });
  const loadPhases = await phases();
  assert.ok(loadPhases?.some((p) => p.startsWith('cut at byte')), `not read in two places: ${loadPhases}`);
  const shown = await shownValues(page, 'interleaved.run');
  assert.equal(Object.keys(shown).length, 5);
  for (const [name, value] of Object.entries(shown)) assert.equal(value, expected.get(name), name);
  // after the tail, the helper is replaced (its wasm memory cannot shrink)
  await page.waitForFunction(() => (window.ragscopeTimings ?? []).some((t) => t.what.startsWith('helper replaced')), null, { timeout: 60_000 });
  // the fresh helper has the qrels again and reads the next run's later part
  const expectedNext = cliSummary(files.run);
  await page.setInputFiles('#file-input', files.run);
  await page.waitForSelector('#results tbody tr[data-run="split.run"]', { timeout: 120_000 });
  const nextPhases = await page.evaluate(() => (window.ragscopeTimings ?? []).filter((t) => t.what === 'load split.run').pop()?.phases.map(([what]) => what));
  assert.ok(nextPhases?.some((p) => p.startsWith('cut at byte')), `not read in two places: ${nextPhases}`);
  assert.ok(!nextPhases.some((p) => p.startsWith('read again whole')), `${nextPhases}`);
  const shownNext = await shownValues(page, 'split.run');
  assert.equal(Object.keys(shownNext).length, 5);
  for (const [name, value] of Object.entries(shownNext)) assert.equal(value, expectedNext.get(name), name);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a topic on both sides of the cut: the run is read again whole', { timeout: 300_000 }, async () => {
  const expected = cliSummary(files.comeback);
  const { page, errors, phases } = await load(files.comeback, 'comeback.run');
  await page.waitForSelector('#results tbody tr[data-run="comeback.run"]', { timeout: 120_000 });
  const loadPhases = await phases();
  assert.ok(loadPhases?.some((p) => p.startsWith('read again whole: a topic on both sides')), `${loadPhases}`);
  const shown = await shownValues(page, 'comeback.run');
  assert.equal(Object.keys(shown).length, 5);
  for (const [name, value] of Object.entries(shown)) assert.equal(value, expected.get(name), name);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad line in the helper\'s part: the whole file\'s error, with its line', { timeout: 300_000 }, async () => {
  let cliError = '';
  try {
    execFileSync(cli, ['trec-eval', files.qrels, files.broken], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    cliError = String(e.stderr);
  }
  assert.match(cliError, new RegExp(`:${files.badLine}:`), cliError);
  const { page, phases } = await load(files.broken, 'broken.run');
  const message = await page.waitForSelector('.error-panel .error-message', { timeout: 120_000 });
  const text = await message.textContent();
  assert.match(text, /broken\.run/);
  assert.match(text, new RegExp(`line ${files.badLine}\\b|:${files.badLine}[:\\s]`), text);
  assert.match(text, /high/);
  const loadPhases = await phases();
  // no row, and the load ended with the error (the first part was read, then the whole file)
  assert.equal(await page.$('#results tbody tr[data-run="broken.run"]'), null);
  assert.equal(loadPhases, null, 'a failed load sends no timings');
  await page.close();
});

test('?helper=0: the run is read by the one worker, with the same numbers', { timeout: 300_000 }, async () => {
  const expected = cliSummary(files.run);
  const { page, errors, phases } = await load(files.run, 'split.run', '&helper=0');
  await page.waitForSelector('#results tbody tr[data-run="split.run"]', { timeout: 120_000 });
  const loadPhases = await phases();
  assert.ok(loadPhases && !loadPhases.some((p) => p.startsWith('cut at byte')), `${loadPhases}`);
  const shown = await shownValues(page, 'split.run');
  assert.equal(Object.keys(shown).length, 5);
  for (const [name, value] of Object.entries(shown)) assert.equal(value, expected.get(name), name);
  assert.deepEqual(errors, []);
  await page.close();
});
