// The Judges panel's batch option end to end, with the fake provider (crates/judge, `markers`
// scenario, its in-memory Message Batches API) on 127.0.0.1 playing Anthropic. The page is opened
// with `?batch-at=3`, the documented knob that lowers the offer threshold (200 requests) so six
// passages are enough. Checked:
//  - the option is offered with the batch price beside the synchronous estimate;
//  - Start submits ONE batch, whose state (id, "in progress", last poll) the page shows;
//  - a reload mid-batch lists the batch kept in this browser; starting the same job again
//    resumes it (polled, imported) and never submits a second batch or any synchronous request;
//  - the replies are parsed like synchronous ones: the qrels equal those of a synchronous run of
//    the same job (fixtures/judge-batch/README.md), except the request the batch itself failed,
//    which is recorded as failed (never given a grade); the qrels are loaded and scored;
//  - every request goes only to the app's origin and the fake server; no CSP violation, no
//    page error. Screenshots of the batch state at desktop and phone widths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startServer, launch, screenshot, recordCspViolations, artifacts, startFakeProvider } from './harness.mjs';

const fixtures = resolve('fixtures/judge-batch');
const files = ['topics.tsv', 'passages.jsonl', 'run.txt'].map((f) => join(fixtures, f));
const KEY = 'sk-ant-e2e-BATCH-51c2';
const MODEL = 'claude-haiku-4-5';
// From the directives (fixtures/judge-batch/README.md): d4 is truncated in both paths; d6 fails
// inside the batch and gets the default grade 1 synchronously.
const SYNC_QRELS = 'q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d5 1\nq2 0 d6 1\n';
const BATCH_QRELS = 'q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d5 1\n';

let server, origin, browser, fake, fakeOrigin;

/** What the fake server received, by kind. */
async function seen() {
  const r = await (await fetch(`${fakeOrigin}/__fake/requests`)).json();
  const is = (m, p) => r.requests.filter((q) => q.method === m && p(q.path)).length;
  return {
    submissions: is('POST', (p) => p === '/v1/messages/batches'),
    polls: is('GET', (p) => /^\/v1\/messages\/batches\/[^/]+$/.test(p)),
    results: is('GET', (p) => p.endsWith('/results')),
    sync: is('POST', (p) => p === '/v1/messages'),
    count: r.count,
  };
}

before(async () => {
  ({ server, origin } = await startServer());
  ({ child: fake, origin: fakeOrigin } = await startFakeProvider());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
  fake?.kill();
});

async function openJudges(context) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const csp = recordCspViolations(page);
  await page.goto(`${origin}/?demo=0&batch-at=3`);
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.click('#nav-judges');
  await page.waitForSelector('#judge-model');
  return { page, errors, csp };
}

/** Loads the three files, fills the form for the fake Anthropic and asks for the estimate. */
async function prepare(page) {
  await page.setInputFiles('#file-input', files);
  for (const kind of ['topics', 'passages', 'run']) {
    await page.waitForSelector(`.file[data-kind="${kind}"]`, { timeout: 30_000 });
  }
  await page.selectOption('#judge-provider', 'anthropic');
  await page.fill('#judge-model', MODEL);
  await page.fill('#judge-base-url', fakeOrigin);
  await page.fill('#judge-key', KEY);
  await page.fill('#judge-k', '3');
  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '6');
}

async function downloadQrels(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#judge-download')]);
  assert.equal(download.suggestedFilename(), `umbrela-${MODEL}.qrels`);
  return readFile(await download.path(), 'utf8');
}

async function failures(page) {
  return page.$$eval('#judge-failures tbody tr', (rows) => rows.map((r) => ({
    qid: r.dataset.qid, docno: r.dataset.docno, error: r.querySelector('.failure-error').textContent,
  })));
}

test('batch option: offered with its price, one submission, state shown, a reload resumes it, outputs as synchronous', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  let { page, errors, csp } = await openJudges(context);

  await prepare(page);
  // Offered above the threshold, with the batch price next to the synchronous one (half).
  const price = await page.textContent('#judge-batch-price');
  const [batchCost, syncCost] = [...price.matchAll(/\$([0-9.]+)/g)].map((m) => Number(m[1]));
  assert.match(price, /instead of/);
  assert.ok(batchCost > 0 && Math.abs(batchCost * 2 - syncCost) <= 2e-5 * syncCost + 1e-5, price);
  assert.equal((await seen()).count, 0, 'nothing sent before Start');
  await page.check('#judge-batch-check');
  // A batch survives a reload only where the user lets the browser keep it (#41).
  await page.check('#judge-keep');
  assert.match(await page.textContent('#judge-start'), /submit a batch of 6 requests/);
  await page.click('#judge-start');

  // Submitted and polled once: the fake reports it running until its second poll.
  await page.waitForSelector('#judge-batches tr[data-state="in_progress"]', { timeout: 60_000 });
  const row = await page.$eval('#judge-batches tbody tr', (r) => ({ ...r.dataset }));
  assert.match(row.batch, /^msgbatch_fake\d+$/);
  assert.equal(row.imported, 'false');
  assert.match(await page.textContent('#judge-batch-polled'), /last checked \d\d:\d\d:\d\d/);
  assert.equal(await page.getAttribute('#judge-job', 'data-phase'), 'batch');
  assert.deepEqual(await seen(), { submissions: 1, polls: 1, results: 0, sync: 0, count: 2 });
  await screenshot(page, 'judge-batch-desktop');
  await page.locator('#judge-job').screenshot({ path: join(artifacts, 'judge-batch-job-desktop.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'judge-batch-phone');
  await page.locator('#judge-job').screenshot({ path: join(artifacts, 'judge-batch-job-phone.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(errors, []);
  assert.deepEqual(csp, []);

  // A reload mid-batch (the worker and its poll timer are gone): the batch is listed as kept.
  await page.reload();
  await page.click('#nav-judges');
  await page.waitForSelector(`#judge-kept li[data-batch="${row.batch}"]`, { timeout: 30_000 });
  assert.match(await page.textContent('#judge-kept'), /umbrela/);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'judge-batch-kept-phone');
  await page.locator('#judge-kept').screenshot({ path: join(artifacts, 'judge-batch-kept-box-phone.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  // The same job again, batch ticked: resumed and collected, not submitted again.
  await prepare(page);
  await page.check('#judge-batch-check');
  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 60_000 });
  const after = await seen();
  assert.equal(after.submissions, 1, 'exactly one batch submission');
  assert.equal(after.sync, 0, 'no synchronous request');
  assert.equal(after.results, 1);
  const done = await page.$eval('#judge-batches tbody tr', (r) => ({ ...r.dataset }));
  assert.deepEqual([done.batch, done.imported], [row.batch, 'true']);
  const job = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
  assert.deepEqual([job.phase, job.done, job.total, job.failed], ['done', '6', '6', '2']);
  const batchQrels = await downloadQrels(page);
  assert.equal(batchQrels, BATCH_QRELS);
  const failed = await failures(page);
  assert.deepEqual(failed.map((f) => f.docno), ['d4', 'd6']);
  assert.match(failed[1].error, /^batch: /);
  await screenshot(page, 'judge-batch-done-desktop');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('#judge-job').screenshot({ path: join(artifacts, 'judge-batch-done-phone.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  // The kept list is gone once collected.
  await page.waitForFunction(() => !document.querySelector('#judge-kept'));

  // The qrels are loaded and scored on the Evaluate page: q1 AP = (1 + 2/3) / 2 (d1, d3
  // relevant), q2 AP = 1/2 (d5 at rank 2; d4 and d6 unjudged).
  await page.waitForSelector(`.file[data-kind="qrels"][data-file="umbrela-${MODEL}.qrels"]`);
  await page.click('#nav-evaluate');
  await page.waitForSelector('#results tbody tr[data-run="run.txt"]', { timeout: 30_000 });
  const map = await page.$eval('#results tr[data-run="run.txt"] td[data-trec="map"] .v', (e) => e.textContent.trim());
  assert.equal(map, ((((1 + 2 / 3) / 2) + 0.5) / 2).toFixed(4));
  assert.deepEqual(errors, []);
  assert.deepEqual(csp, []);

  // The synchronous path on the same job, in a fresh browser profile (empty cache).
  const context2 = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context2.on('request', (r) => requests.push(r.url()));
  const second = await openJudges(context2);
  await prepare(second.page);
  assert.equal(await second.page.isChecked('#judge-batch-check'), false);
  await second.page.click('#judge-start');
  await second.page.waitForSelector('#judge-result', { timeout: 60_000 });
  const syncQrels = await downloadQrels(second.page);
  assert.equal(syncQrels, SYNC_QRELS);
  assert.deepEqual((await failures(second.page)).map((f) => f.docno), ['d4']);
  assert.equal(await second.page.$('#judge-batches'), null);
  const final = await seen();
  assert.deepEqual([final.submissions, final.sync], [1, 6]);
  // Equal outputs, but for the request the batch failed.
  assert.equal(syncQrels.split('\n').filter((l) => !l.includes(' d6 ')).join('\n'), batchQrels);

  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith(fakeOrigin)
    && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(foreign, []);
  assert.deepEqual(second.errors, []);
  assert.deepEqual(second.csp, []);
  await context2.close();
  await context.close();
});
