// The Judges panel end to end: the fake provider (crates/judge, `markers` scenario) on
// 127.0.0.1 plays an OpenAI-compatible server; the page loads topics, passages and a run, shows
// the first prompt and the estimate, and runs UMBRELA from the worker with fetch. Checked: the
// grades (from the passages' FAKE{...} directives, see fixtures/judges/README.md), a 429
// retried and an unparseable reply recorded as a failure with its raw text, the qrels loaded
// as a file the Evaluate page scores, every request going only to the fake server and none
// before Start, no CSP violation, the key never in IndexedDB unless opted in (and erased by
// "Forget everything"), and, with "Keep replies in this browser" ticked, a reload + rerun that
// sends nothing (the IndexedDB cache). Without the tick (the default) a job leaves no judge
// cache database and a rerun in the same tab still sends nothing (the tab's memory).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startServer, launch, screenshot, recordCspViolations, startFakeProvider, whatThePageShows } from './harness.mjs';

const fixtures = resolve('fixtures/judges');
const files = ['topics.tsv', 'passages.jsonl', 'run.txt'].map((f) => join(fixtures, f));
const KEY = 'sk-e2e-SECRET-7f3a';
const EXPECTED_QRELS = 'q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d5 1\n';

let server, origin, browser, fake, fakeOrigin;

async function fakeRequests() {
  const r = await fetch(`${fakeOrigin}/__fake/requests`);
  return r.json();
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

/** Loads the three files and fills the form for the fake server. */
async function prepare(page, { key = KEY } = {}) {
  const consoleLines = [];
  const onConsole = (m) => consoleLines.push(`${m.type()}: ${m.text()}`);
  page.on('console', onConsole);
  await page.setInputFiles('#file-input', files);
  for (const kind of ['topics', 'passages', 'run']) {
    // Once in a full run (2026-11-25), after a reload, the topics never showed as loaded and
    // the run could not be reproduced: if it comes back, say what the page showed.
    await page.waitForSelector(`.file[data-kind="${kind}"]`, { timeout: 30_000 }).catch(async (e) => {
      const shown = await whatThePageShows(page);
      console.error(`the ${kind} file never showed as loaded; the page showed:`, JSON.stringify(shown, null, 1));
      console.error('console:', consoleLines.join('\n'));
      throw e;
    });
  }
  page.off('console', onConsole);
  await page.selectOption('#judge-provider', 'openai-compatible');
  await page.fill('#judge-model', 'fake-judge');
  await page.fill('#judge-base-url', `${fakeOrigin}/v1`);
  await page.fill('#judge-key', key);
  await page.fill('#judge-k', '3');
}

async function idbState(page) {
  return page.evaluate(async () => {
    const names = (await indexedDB.databases()).map((d) => d.name);
    const dump = async (name, store) => {
      if (!names.includes(name)) return [];
      const db = await new Promise((ok, fail) => {
        const r = indexedDB.open(name);
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      if (!db.objectStoreNames.contains(store)) { db.close(); return []; }
      const all = await new Promise((ok, fail) => {
        const r = db.transaction(store).objectStore(store).getAll();
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      db.close();
      return all.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    };
    return {
      names,
      cache: await dump('ragscope-judge-cache', 'replies'),
      keys: await dump('ragscope-keys', 'keys'),
      flag: localStorage.getItem('ragscope.remember-key'),
    };
  });
}

test('UMBRELA through the Judges panel: estimate, grades, retries, failures, cache, privacy', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // Worker requests included: the context sees every request of the page and its workers.
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  const csp = recordCspViolations(page);

  // Hash routes: the header links, back and forward.
  await page.goto(`${origin}/?demo=0`);
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.click('#nav-judges');
  await page.waitForSelector('#judge-model');
  assert.equal(new URL(page.url()).hash, '#/judges');
  await page.click('#nav-learn');
  await page.waitForSelector('.learn');
  await page.goBack();
  await page.waitForSelector('#judge-model');
  await page.goBack();
  await page.waitForSelector('.tab-panel');
  assert.equal(await page.$('#judge-model'), null);
  await page.goForward();
  await page.waitForSelector('#judge-model');
  assert.equal(await page.getAttribute('#nav-judges', 'aria-current'), 'page');

  await prepare(page);
  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '5');
  const prompt = await page.textContent('#judge-first-prompt');
  assert.match(prompt, /What is Python used for\?/);
  assert.match(prompt, /web development/);
  assert.match(await page.textContent('#judge-estimate-summary'), new RegExp(`${fakeOrigin}/v1/chat/completions`));
  // Nothing leaves the page before Start.
  assert.equal((await fakeRequests()).count, 0);
  assert.deepEqual(requests.filter((u) => u.startsWith(fakeOrigin)), []);

  // Keeping replies is a choice, off by default; ticked here for the reload below.
  assert.equal(await page.isChecked('#judge-keep'), false);
  await page.check('#judge-keep');
  await page.waitForFunction(() => localStorage.getItem('ragscope.keep-judge-replies') === '1');
  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 60_000 });
  const job = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
  assert.deepEqual([job.phase, job.done, job.total, job.failed, job.cached], ['done', '5', '5', '1', '0']);
  // d1, d2 twice (429 then an answer), d3, d4, d5.
  const seen = await fakeRequests();
  assert.equal(seen.count, 6);
  assert.ok(seen.requests.every((r) => r.method === 'POST' && r.path === '/v1/chat/completions'));
  assert.equal(seen.requests.filter((r) => r.body.includes('429=1')).length, 2);

  const failures = await page.$$eval('#judge-failures tbody tr', (rows) => rows.map((r) => ({
    qid: r.dataset.qid, docno: r.dataset.docno, raw: r.querySelector('.failure-raw pre')?.textContent,
  })));
  assert.deepEqual(failures, [{ qid: 'q2', docno: 'd4', raw: 'I cannot tell.' }]);

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#judge-download')]);
  assert.equal(download.suggestedFilename(), 'umbrela-fake-judge.qrels');
  assert.equal(await readFile(await download.path(), 'utf8'), EXPECTED_QRELS);
  // The qrels are a loaded file, and the Evaluate page scores the run with them.
  await page.waitForSelector('.file[data-kind="qrels"][data-file="umbrela-fake-judge.qrels"]');
  await screenshot(page, 'judges-desktop');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'judges-phone');
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.click('#nav-evaluate');
  await page.waitForSelector('#results tbody tr[data-run="run.txt"]', { timeout: 30_000 });
  // trec_eval counts rel ≥ 1 as relevant. q1: d1 (3) and d3 (2) at ranks 1 and 3, AP =
  // (1/1 + 2/3) / 2; q2: d5 (1) at rank 2 (d4 unjudged), AP = 1/2.
  const map = await page.$eval('#results tr[data-run="run.txt"] td[data-trec="map"] .v', (e) => e.textContent.trim());
  assert.equal(map, ((((1 + 2 / 3) / 2) + 0.5) / 2).toFixed(4));

  // Only the app's own files and the fake server; no CSP violation; the key in no store.
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith(fakeOrigin)
    && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(foreign, []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  let idb = await idbState(page);
  assert.ok(idb.names.includes('ragscope-judge-cache'), JSON.stringify(idb.names));
  assert.equal(idb.cache.length, 5, 'one cached reply per item (the unparseable one too)');
  assert.ok(!idb.names.includes('ragscope-keys'), 'no key database without opting in');
  assert.ok(idb.cache.every((r) => !r.includes(KEY)));
  assert.equal(idb.flag, null);

  // A reload resumes from the cache: the same grades and failure, no request at all.
  await page.reload();
  await page.click('#nav-judges');
  await prepare(page);
  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '0');
  assert.equal(await page.isChecked('#judge-keep'), true, 'the choice survives a reload');
  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 60_000 });
  const again = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
  assert.deepEqual([again.done, again.cached, again.failed], ['5', '4', '1']);
  assert.equal((await fakeRequests()).count, 6, 'the rerun sent nothing');
  const [download2] = await Promise.all([page.waitForEvent('download'), page.click('#judge-download')]);
  assert.equal(await readFile(await download2.path(), 'utf8'), EXPECTED_QRELS);

  // Opting in keeps the key on this device; "Forget everything" erases it and the cache.
  await page.check('#judge-remember-key');
  await page.waitForFunction(() => localStorage.getItem('ragscope.remember-key') === '1');
  await page.waitForFunction(async () => (await indexedDB.databases()).some((d) => d.name === 'ragscope-keys'));
  idb = await idbState(page);
  assert.deepEqual(idb.keys, [KEY]);
  await page.reload();
  await page.click('#nav-judges');
  await page.waitForFunction((k) => document.querySelector('#judge-key')?.value === k, KEY);
  assert.equal(await page.isChecked('#judge-remember-key'), true);
  await page.click('#forget');
  await page.waitForFunction(async () => {
    const names = (await indexedDB.databases()).map((d) => d.name);
    return !names.includes('ragscope-keys') && !names.includes('ragscope-judge-cache');
  });
  assert.equal(await page.inputValue('#judge-key'), '');
  assert.equal(await page.evaluate(() => localStorage.getItem('ragscope.keep-judge-replies')), null);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('without "Keep replies" a job keeps nothing in the browser and a rerun in the tab pays nothing', async () => {
  // Its own fake provider, so that its request count starts at 0; its own context (storage).
  const own = await startFakeProvider();
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const count = async () => (await (await fetch(`${own.origin}/__fake/requests`)).json()).count;
    await page.goto(`${origin}/?demo=0`);
    await page.click('#nav-judges');
    await page.waitForSelector('#judge-model');
    await prepare(page);
    await page.fill('#judge-base-url', `${own.origin}/v1`);
    await page.click('#judge-estimate');
    await page.waitForSelector('#judge-preview');
    assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '5');
    assert.equal(await page.isChecked('#judge-keep'), false, 'off by default');
    await page.click('#judge-start');
    await page.waitForSelector('#judge-result', { timeout: 60_000 });
    const first = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
    assert.deepEqual([first.phase, first.done, first.cached, first.failed], ['done', '5', '0', '1']);
    assert.equal(await count(), 6);
    const names = async () => page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
    assert.ok(!(await names()).includes('ragscope-judge-cache'), JSON.stringify(await names()));
    assert.equal(await page.evaluate(() => localStorage.getItem('ragscope.keep-judge-replies')), null);

    // The same job again in this tab: answered from the tab's memory, nothing sent.
    await page.click('#judge-estimate');
    await page.waitForSelector('#judge-preview');
    assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '0');
    await page.click('#judge-start');
    await page.waitForSelector('#judge-job[data-phase="done"][data-cached="4"]', { timeout: 60_000 });
    const again = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
    assert.deepEqual([again.done, again.cached, again.failed], ['5', '4', '1']);
    assert.equal(await count(), 6, 'the rerun sent nothing');
    assert.ok(!(await names()).includes('ragscope-judge-cache'), JSON.stringify(await names()));
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    own.child.kill();
  }
});
