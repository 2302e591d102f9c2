// The Tournament and Agreement views end to end: RAGElo's notebook experiment (queries,
// documents, answers and 200 judged games of 6 agents) loaded through the file input; the
// leaderboard must equal `ragscope elo` (same crates/eval code, same seed) and the Bradley–Terry
// ratings the scipy MLE of tests/oracle/tournament; two qrels give the Agreement view, checked
// against scikit-learn and krippendorff. Screenshots of both views.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { startServer, launch, screenshot, shared, skip } from './harness.mjs';

let server, origin, browser;
const notebook = (f) => join(shared, 'data/ragelo/notebooks', f);
const fixture = async (name) => JSON.parse(await readFile(resolve('../../crates/eval/tests/fixtures/tournament', name), 'utf8'));
// The CLI built by the native tests (`cargo test --workspace` runs before these in xtask).
const cli = process.env.RAGSCOPE_CLI ?? resolve('../../target/debug/ragscope');

before(async () => {
  ({ server, origin } = await startServer());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

async function openApp() {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(origin + '/?demo=0');
  await page.waitForSelector('#file-input', { state: 'attached' });
  return { page, errors };
}

const leaderboard = (page) => page.$$eval('#leaderboard-0 tbody tr', (rows) => rows.map((r) => ({
  agent: r.dataset.agent, elo: Number(r.dataset.elo), bt: Number(r.dataset.bt),
})));

test('RAGElo notebook experiment: the leaderboard equals the CLI and the scipy Bradley–Terry MLE', async (t) => {
  const { page, errors } = await openApp();
  await page.setInputFiles('#file-input', ['queries.csv', 'documents.csv', 'answers.csv', 'pairwise_answers_evaluations.csv'].map(notebook));
  await page.waitForSelector('.file[data-kind="ragelo-games"]', { timeout: 60_000 });
  const kinds = await page.$$eval('.file', (li) => li.map((l) => `${l.dataset.file}:${l.dataset.kind}`).sort());
  assert.deepEqual(kinds, ['answers.csv:ragelo', 'documents.csv:ragelo', 'pairwise_answers_evaluations.csv:ragelo-games', 'queries.csv:ragelo']);
  await page.click('#tab-tournament');
  await page.waitForSelector('#leaderboard-0 tbody tr', { timeout: 60_000 });
  const shown = await leaderboard(page);
  assert.equal(shown.length, 6);

  // Bradley–Terry against the independent scipy solver (rating differences below 1e-6).
  const bt = (await fixture('bradley_terry.json')).cases.find((c) => c.name === 'notebook').expected;
  for (const row of shown) assert.ok(Math.abs(row.bt - bt[row.agent]) < 1e-6, `${row.agent}: ${row.bt} vs ${bt[row.agent]}`);

  if (existsSync(cli)) {
    const run = (...args) => JSON.parse(execFileSync(cli, ['elo', notebook('pairwise_answers_evaluations.csv'), '--format', 'json', ...args], { encoding: 'utf8' }));
    const elo = run();
    assert.deepEqual(shown.map((r) => r.agent), Object.keys(elo.ratings), 'same order as the CLI');
    for (const row of shown) assert.equal(row.elo, elo.ratings[row.agent].rating, row.agent);
    const btCli = run('--model', 'bradley-terry');
    for (const row of shown) assert.equal(row.bt, btCli.ratings[row.agent].rating, row.agent);
  } else {
    skip(t, `CLI comparison (no ${cli}; build it with cargo build -p ragscope-cli)`);
  }

  const flips = await page.textContent('#flips-0');
  assert.match(flips, /23 of 68/);
  assert.equal(await page.$$eval('#chart-winrate-0 rect', (r) => r.length), 36);
  assert.equal(await page.$$eval('#chart-pairs-0 rect', (r) => r.length), 36);
  await screenshot(page, 'tournament');
  assert.deepEqual(errors, []);
  await page.close();
});

test('two qrels files give the Agreement view with scikit-learn and krippendorff values', async () => {
  const { page, errors } = await openApp();
  const inputs = JSON.parse(await readFile(join(shared, 'data/umbrela/ensemble_case_inputs.json'), 'utf8'));
  const want = (await fixture('agreement_labels.json')).cases.find((c) => c.name === 'umbrela_judges');
  const file = (name, text) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(text) });
  await page.setInputFiles('#file-input', [file('judge-one.qrels', inputs.judge_one)]);
  await page.waitForSelector('.file[data-file="judge-one.qrels"][data-kind="qrels"]', { timeout: 60_000 });
  await page.setInputFiles('#file-input', [file('judge-two.qrels', inputs.judge_two)]);
  await page.waitForSelector('.file[data-file="judge-two.qrels"][data-kind="qrels"]', { timeout: 60_000 });
  await page.click('#tab-agreement');
  await page.waitForSelector('#agreement tbody tr', { timeout: 60_000 });
  const values = Object.fromEntries(await page.$$eval('#agreement tbody tr', (rows) => rows.map((r) => [r.dataset.statistic, Number(r.dataset.value)])));
  const expected = {
    "Cohen's kappa": want.cohen,
    'weighted kappa (linear)': want.linear,
    'weighted kappa (quadratic)': want.quadratic,
    "Krippendorff's alpha (nominal)": want.alpha_nominal,
    "Krippendorff's alpha (ordinal)": want.alpha_ordinal,
    "Krippendorff's alpha (interval)": want.alpha_interval,
  };
  for (const [name, value] of Object.entries(expected)) assert.ok(Math.abs(values[name] - value) < 1e-12, `${name}: ${values[name]} vs ${value}`);
  await screenshot(page, 'agreement');
  assert.deepEqual(errors, []);
  await page.close();
});
