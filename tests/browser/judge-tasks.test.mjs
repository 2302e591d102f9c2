// The Judges panel's answer-side tasks end to end, with the fake provider (crates/judge,
// `markers` scenario) on 127.0.0.1 as an OpenAI-compatible server:
//  - AutoNuggetizer assign on nuggetizer's own example files (nuggets.jsonl + demo-run.jsonl):
//    the first prompt and the estimate before Start, the assignments loaded at once into the
//    Answers view, whose nugget scores equal `ragscope nuggets score` on the downloaded file in
//    every mode;
//  - RAGElo pairwise battles on fixtures/judge-tasks (FAKE{...} directives, see its README):
//    wins, ties, a position flip, and two unparseable orders recorded as failures with their raw
//    replies; the games loaded at once into the Tournament view, whose Elo and Bradley–Terry
//    ratings equal `ragscope elo` on the CSV the page downloads.
// Every request goes only to the app's origin and the fake server (none before Start), no CSP
// violation, no page error. Screenshots at desktop and phone widths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, launch, screenshot, recordCspViolations, shared, startFakeProvider } from './harness.mjs';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
const fixtures = resolve('fixtures/judge-tasks');
const nz = (f) => join(shared, 'data/nuggetizer', f);

let server, origin, browser, fake, fakeOrigin, cli, tmp;

async function fakeRequests() {
  const r = await fetch(`${fakeOrigin}/__fake/requests`);
  return r.json();
}

before(async () => {
  cli = process.env.RAGSCOPE_CLI ?? join(root, 'target/debug/ragscope');
  if (!existsSync(cli)) execFileSync('cargo', ['build', '-p', 'ragscope-cli'], { cwd: root, stdio: 'inherit' });
  tmp = await mkdtemp(join(tmpdir(), 'ragscope-judge-tasks-'));
  ({ server, origin } = await startServer());
  ({ child: fake, origin: fakeOrigin } = await startFakeProvider());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
  fake?.kill();
});

/** A page on the Judges panel with its requests, CSP violations and errors recorded. */
async function openJudges(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  const csp = recordCspViolations(page);
  await page.goto(`${origin}/?demo=0`);
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.click('#nav-judges');
  await page.waitForSelector('#judge-model');
  return { context, page, errors, requests, csp };
}

async function fillProvider(page) {
  await page.selectOption('#judge-provider', 'openai-compatible');
  await page.fill('#judge-model', 'fake-judge');
  await page.fill('#judge-base-url', `${fakeOrigin}/v1`);
}

/** Saves the page's download of `#judge-download` under tmp and returns its path and text. */
async function download(page, name) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#judge-download')]);
  assert.equal(d.suggestedFilename(), name);
  const path = join(tmp, name);
  await copyFile(await d.path(), path);
  return { path, text: await readFile(path, 'utf8') };
}

function onlyOurOrigins(requests) {
  return requests.filter((u) => !u.startsWith(origin) && !u.startsWith(fakeOrigin)
    && !u.startsWith('blob:') && !u.startsWith('data:'));
}

/** { run → { score → value } } as the Answers table holds it. */
async function shownNuggetScores(page) {
  return page.$$eval('#answers-scores tbody tr', (rows) => Object.fromEntries(rows.map((row) => [
    row.dataset.run,
    Object.fromEntries([...row.querySelectorAll('td[data-value]')]
      .map((td) => [td.dataset.measure, Number(td.dataset.value)])),
  ])));
}

test('nuggets assign on nuggetizer\'s files: estimate, run, scores in the Answers view equal the CLI', async () => {
  const { context, page, errors, requests, csp } = await openJudges();
  const before = (await fakeRequests()).count;
  await page.setInputFiles('#file-input', [nz('nuggets.jsonl'), nz('demo-run.jsonl')]);
  await page.waitForSelector('.file[data-kind="nuggets"]', { timeout: 30_000 });
  await page.waitForSelector('.file[data-kind="rag-answers"]', { timeout: 30_000 });
  await fillProvider(page);
  await page.selectOption('#judge-task', 'nuggets-assign');
  await page.waitForSelector('#judge-task-inputs[data-task="nuggets-assign"]');
  assert.match(await page.textContent('#judge-inputs'), /demo-run\.jsonl/);

  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '1');
  const prompt = await page.textContent('#judge-first-prompt');
  assert.match(prompt, /What is Python used for\?/);
  assert.match(prompt, /Python is used for web development\./);
  assert.match(prompt, /Return exactly 2 labels/);
  assert.match(await page.textContent('#judge-estimate-summary'), /answer, batch of 10 nuggets/);
  assert.equal((await fakeRequests()).count, before, 'nothing sent before Start');
  assert.deepEqual(requests.filter((u) => u.startsWith(fakeOrigin)), []);

  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 60_000 });
  const job = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
  assert.deepEqual([job.phase, job.done, job.total, job.failed], ['done', '1', '1', '0']);
  assert.equal((await fakeRequests()).count, before + 1);

  const file = await download(page, 'nuggets-assign-fake-judge.jsonl');
  const line = JSON.parse(file.text.trim());
  assert.deepEqual(line.nuggets.map((n) => [n.importance, n.assignment]), [['vital', 'support'], ['okay', 'support']]);
  // Loaded at once as a nuggetizer assignments file.
  await page.waitForSelector('.file[data-kind="nugget-assignments"][data-file="nuggets-assign-fake-judge.jsonl"]', { timeout: 30_000 });
  await screenshot(page, 'judge-tasks-nuggets-desktop');

  await page.click('#judge-result-view');
  await page.waitForSelector('#answers-scores tbody tr[data-run="demo-run"]', { timeout: 60_000 });
  for (const [i, mode] of ['paper', 'nuggetizer', 'open-rag-eval'].entries()) {
    await page.selectOption('#answers-mode', String(i));
    await page.waitForTimeout(100);
    const shown = await shownNuggetScores(page);
    const expected = JSON.parse(execFileSync(cli, ['nuggets', 'score', '--compat', mode, '--format', 'json', file.path]).toString());
    assert.deepEqual(Object.keys(shown), expected.runs.map((r) => r.run_id), mode);
    for (const run of expected.runs) {
      for (const [name, value] of Object.entries(run.mean)) {
        assert.equal(shown[run.run_id][name], value, `${mode} ${run.run_id} ${name}`);
      }
    }
  }
  await screenshot(page, 'judge-tasks-answers-view');

  assert.deepEqual(onlyOurOrigins(requests), []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('pairwise battles: failures with raw replies, the flip rate, Elo in the Tournament view equals ragscope elo', async () => {
  const { context, page, errors, requests, csp } = await openJudges();
  const before = (await fakeRequests()).count;
  await page.setInputFiles('#file-input', ['queries.csv', 'answers.csv'].map((f) => join(fixtures, f)));
  await page.waitForFunction(() => document.querySelectorAll('.file[data-kind="ragelo"]').length === 2, null, { timeout: 30_000 });
  await fillProvider(page);
  await page.selectOption('#judge-task', 'pairwise');
  await page.waitForSelector('#judge-queries');
  // Each RAGElo table goes to its role by what it holds.
  const picked = async (sel) => page.$eval(sel, (s) => s.options[s.selectedIndex].textContent);
  assert.equal(await picked('#judge-queries'), 'queries.csv');
  assert.equal(await picked('#judge-answers'), 'answers.csv');
  assert.equal(await picked('#judge-documents'), 'none');

  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  // 8 games (q1 and q2: 3 each, q3 and q4: 1 each) in both orders.
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '16');
  assert.match(await page.textContent('#judge-first-prompt'), /\[The Start of Assistant A's Answer\]/);
  assert.equal((await fakeRequests()).count, before, 'nothing sent before Start');

  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 120_000 });
  const job = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
  assert.deepEqual([job.phase, job.done, job.total, job.failed], ['done', '16', '16', '2']);
  // 14 answered at once; q4's two orders asked 4 times each (3 re-asks at a higher temperature).
  assert.equal((await fakeRequests()).count - before, 14 + 2 * 4);

  const failures = await page.$$eval('#judge-failures tbody tr', (rows) => rows.map((r) => ({
    qid: r.dataset.qid, item: r.dataset.docno, raw: r.querySelector('.failure-raw pre')?.textContent,
  })));
  failures.sort((a, b) => a.item.localeCompare(b.item));
  assert.deepEqual(failures, ['ab', 'ba'].map((order) => ({
    qid: 'q4', item: `agent_a=alpha agent_b=beta order=${order}`, raw: 'I am not sure what you are asking.',
  })));
  assert.match(await page.textContent('#judge-result-note'), /7 games judged in both orders; position flips .*: 1 \(14\.3%\)/);

  const file = await download(page, 'pairwise-fake-judge.csv');
  assert.ok(file.text.startsWith('qid,agent_a,agent_b,raw_answer,answer,relevance\n'));
  await page.waitForSelector('.file[data-kind="ragelo-games"][data-file="pairwise-fake-judge.csv"]', { timeout: 30_000 });
  await page.evaluate(() => document.querySelector('#judge-failures details')?.setAttribute('open', ''));
  await screenshot(page, 'judge-tasks-pairwise-desktop');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'judge-tasks-pairwise-phone');
  await page.setViewportSize({ width: 1280, height: 900 });

  await page.click('#judge-result-view');
  await page.waitForSelector('#leaderboard-0 tbody tr', { timeout: 60_000 });
  const shown = await page.$$eval('#leaderboard-0 tbody tr', (rows) => rows.map((r) => ({
    agent: r.dataset.agent, elo: Number(r.dataset.elo), bt: Number(r.dataset.bt),
  })));
  const elo = JSON.parse(execFileSync(cli, ['elo', file.path, '--format', 'json'], { encoding: 'utf8' }));
  assert.deepEqual(shown.map((r) => r.agent), Object.keys(elo.ratings), 'same agents in the same order as the CLI');
  for (const row of shown) assert.equal(row.elo, elo.ratings[row.agent].rating, row.agent);
  const bt = JSON.parse(execFileSync(cli, ['elo', file.path, '--format', 'json', '--model', 'bradley-terry'], { encoding: 'utf8' }));
  for (const row of shown) assert.equal(row.bt, bt.ratings[row.agent].rating, row.agent);
  await screenshot(page, 'judge-tasks-tournament-view');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'judge-tasks-tournament-phone');
  await page.setViewportSize({ width: 1280, height: 900 });

  // Pointwise grades of the same answers: a download (graded rows only) and the Answers view
  // (mean grade per agent, the failed grade shown as failed).
  await page.click('#nav-judges');
  await page.selectOption('#judge-task', 'pointwise');
  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '10');
  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 120_000 });
  const grades = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
  assert.deepEqual([grades.done, grades.failed], ['10', '1']);
  const csv = await download(page, 'pointwise-fake-judge.csv');
  const lines = csv.text.trim().split('\n');
  assert.equal(lines[0], 'qid,agent,raw_answer,reasoning,score');
  assert.equal(lines.length, 1 + 9, 'the failed answer (q4 beta) is left out, never given a grade');
  await page.waitForSelector('.file[data-file="pointwise-grades.csv"]', { timeout: 30_000 });
  await page.click('#judge-result-view');
  await page.waitForSelector('#answers-grades tbody tr', { timeout: 60_000 });
  // The download's grades per agent (the score is the last column), averaged here.
  const wantGrades = {};
  for (const line of lines.slice(1)) {
    const agent = line.split(',')[1];
    (wantGrades[agent] ??= []).push(Number(line.slice(line.lastIndexOf(',') + 1)));
  }
  const shownGrades = await page.$$eval('#answers-grades tbody tr', (rows) => rows.map((r) => ({
    agent: r.dataset.agent,
    mean: Number(r.querySelector('[data-measure="mean"]').dataset.value),
    failed: Number(r.querySelector('[data-measure="failed"]').textContent),
  })));
  assert.deepEqual(shownGrades.map((r) => r.agent).sort(), Object.keys(wantGrades).sort());
  for (const row of shownGrades) {
    const g = wantGrades[row.agent];
    assert.ok(Math.abs(row.mean - g.reduce((a, b) => a + b, 0) / g.length) < 1e-12, row.agent);
    assert.equal(row.failed, row.agent === 'beta' ? 1 : 0, row.agent);
  }
  await page.evaluate(() => document.querySelector('#answers-grades-queries')?.setAttribute('open', ''));
  assert.equal(await page.textContent('#answers-grades-queries tr[data-agent="beta"][data-qid="q4"] .failed'), 'failed');
  await screenshot(page, 'judge-tasks-grades-view');

  assert.deepEqual(onlyOurOrigins(requests), []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('citation judgments loaded by hand: the Answers view equals ragscope citations', async () => {
  const { context, page, errors, csp } = await openJudges();
  // The judgments `ragscope judge citations` wrote against the fake provider (see its README).
  const judgments = join(root, 'crates/eval/tests/fixtures/answers/judge-citations/judgments.jsonl');
  await page.setInputFiles('#file-input', [judgments]);
  await page.waitForSelector('.file[data-kind="citation-judgments"][data-file="judgments.jsonl"]', { timeout: 30_000 });
  await page.click('#nav-evaluate');
  await page.click('#tab-answers');
  await page.waitForSelector('#answers-citations tbody tr', { timeout: 60_000 });
  const shown = await page.$$eval('#answers-citations tbody tr', (rows) => rows.map((r) => ({
    run: r.dataset.run,
    p: Number(r.querySelector('[data-measure="precision"]').dataset.value),
    r: Number(r.querySelector('[data-measure="recall"]').dataset.value),
    f1: Number(r.querySelector('[data-measure="f1"]').dataset.value),
  })));
  const expected = JSON.parse(execFileSync(cli, ['citations', '--format', 'json', judgments], { encoding: 'utf8' }));
  assert.deepEqual(shown, expected.runs.map((x) => ({ run: x.run_id, p: x.precision, r: x.recall, f1: x.f1 })));
  await page.evaluate(() => document.querySelector('#answers-citations-topics')?.setAttribute('open', ''));
  await screenshot(page, 'judge-tasks-citations-view');
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('each task says what it is missing before anything can be estimated', async () => {
  const { context, page, errors } = await openJudges({ width: 390, height: 844 });
  await fillProvider(page);
  const want = {
    umbrela: /topics file/,
    'nuggets-create': /topics file/,
    'nuggets-score': /nuggets file/,
    'nuggets-assign': /nuggets file/,
    pairwise: /queries\.csv/,
    pointwise: /queries\.csv/,
    citations: /TREC RAG answer file/,
  };
  for (const [task, re] of Object.entries(want)) {
    await page.selectOption('#judge-task', task);
    await page.waitForSelector(`#judge-task-inputs[data-task="${task}"]`);
    assert.match(await page.textContent('#judge-missing'), re, task);
    assert.equal(await page.isDisabled('#judge-estimate'), true, task);
  }
  await page.selectOption('#judge-task', 'pointwise');
  await screenshot(page, 'judge-tasks-missing-phone');
  assert.deepEqual(errors, []);
  await context.close();
});
