// docs/privacy.md's promises in one Chromium: (a) every store the app can keep (files, API
// keys, judge replies, lost-in-the-middle results; crates/platform/src/stores.rs) is kept only
// on a tick, and "Forget everything" leaves no such IndexedDB database and no `ragscope.` key in
// localStorage; (b) framed by another origin, the app does not start and says why, with a link
// to open it in its own tab; (c) the Evaluate page alone never fetches the lost-in-the-middle
// data (the service worker does not pre-cache it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, launch, screenshot } from './harness.mjs';

// The databases of crates/platform/src/stores.rs's STORES (docs/privacy.md's table).
const STORES = ['ragscope', 'ragscope-keys', 'ragscope-judge-cache', 'ragscope-litm'];
const fixtures = resolve('fixtures/judges');
const files = ['topics.tsv', 'passages.jsonl', 'run.txt'].map((f) => join(fixtures, f));

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const kept = (page) => page.evaluate(async () => ({
  dbs: (await indexedDB.databases()).map((d) => d.name),
  flags: Object.keys(localStorage).filter((k) => k.startsWith('ragscope.')),
}));

test('every consent ticked, then "Forget everything" leaves no store and no flag', async () => {
  const { server, origin } = await startServer();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${origin}/?demo=0`);
    await page.waitForSelector('#file-input', { state: 'attached' });
    // Nothing is kept before a tick.
    assert.deepEqual(await kept(page), { dbs: [], flags: [] });

    // "Remember my files here" after loading small files.
    await page.setInputFiles('#file-input', files);
    await page.waitForSelector('.file[data-kind="run"]', { timeout: 30_000 });
    await page.check('#remember');
    await page.waitForFunction(async () => (await indexedDB.databases()).some((d) => d.name === 'ragscope'));

    // The Judges page: a remembered key and "Keep replies" (the estimate sends nothing).
    await page.click('#nav-judges');
    await page.selectOption('#judge-provider', 'openai-compatible');
    await page.fill('#judge-model', 'fake-judge');
    await page.fill('#judge-base-url', 'http://127.0.0.1:9/v1');
    await page.fill('#judge-key', 'sk-privacy-e2e');
    await page.fill('#judge-k', '3');
    await page.check('#judge-remember-key');
    await page.waitForFunction(async () => (await indexedDB.databases()).some((d) => d.name === 'ragscope-keys'));
    await page.click('#judge-estimate');
    await page.waitForSelector('#judge-keep');
    assert.equal(await page.isChecked('#judge-keep'), false, 'off by default');
    await page.check('#judge-keep');
    await screenshot(page, 'privacy-judges-keep');
    // Ticking records the consent; nothing is written before a job runs.
    assert.ok(!(await kept(page)).dbs.includes('ragscope-judge-cache'));

    // The lost-in-the-middle page's box.
    await page.goto(`${origin}/?demo=0#/learn/lost-in-the-middle`);
    await page.waitForSelector('#litm-keep', { timeout: 60_000 });
    assert.equal(await page.isChecked('#litm-keep'), false, 'off by default');
    await page.check('#litm-keep');
    await page.waitForFunction(() => localStorage.getItem('ragscope.keep-litm') === '1');

    const before = await kept(page);
    assert.deepEqual(before.flags.sort(),
      ['ragscope.keep-judge-replies', 'ragscope.keep-litm', 'ragscope.remember', 'ragscope.remember-key']);
    // The two stores written only by a job get a database here, as a job with consent would
    // leave, so that the erasure of each is checked.
    await page.evaluate(async (names) => {
      for (const name of names) {
        await new Promise((ok, fail) => {
          const r = indexedDB.open(name);
          r.onsuccess = () => { r.result.close(); ok(); };
          r.onerror = () => fail(r.error);
        });
      }
    }, ['ragscope-judge-cache', 'ragscope-litm']);
    assert.deepEqual((await kept(page)).dbs.filter((d) => STORES.includes(d)).sort(), [...STORES].sort());

    await page.click('#forget');
    await page.waitForFunction(async (stores) => {
      const names = (await indexedDB.databases()).map((d) => d.name);
      return !names.some((n) => stores.includes(n));
    }, STORES, { timeout: 30_000 });
    // A read of the litm database under way at the click may list it again for a moment
    // before the deletion queued after it runs: the state that lasts is what counts.
    await page.waitForTimeout(2000);
    const afterForget = await kept(page);
    assert.deepEqual(afterForget.dbs.filter((d) => STORES.includes(d)), []);
    assert.deepEqual(afterForget.flags, []);
    assert.equal(await page.isChecked('#litm-keep'), false);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    server.close();
  }
});

test('framed by another origin, the app does not start and says why', async () => {
  const app = await startServer();
  const site = await mkdtemp(join(tmpdir(), 'ragscope-framer-'));
  await writeFile(join(site, 'index.html'),
    `<!doctype html><title>framer</title><iframe id="app" src="${app.origin}/" width="900" height="500"></iframe>`);
  const framer = await startServer('/', site);
  assert.notEqual(framer.origin, app.origin);
  const context = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const page = await context.newPage();
    await page.goto(`${framer.origin}/`);
    const frame = page.frameLocator('#app');
    await frame.locator('#framed').waitFor({ timeout: 60_000 });
    assert.equal(await frame.locator('#framed p').first().textContent(),
      "ragscope does not run inside another site's frame: open it in its own tab.");
    const link = frame.locator('#framed a');
    assert.equal(await link.getAttribute('href'), `${app.origin}/`);
    assert.equal(await link.getAttribute('target'), '_blank');
    // No app behind the notice: no results table, no header, no file input.
    for (const sel of ['#results', '#forget', '#file-input']) {
      assert.equal(await frame.locator(sel).count(), 0, sel);
    }
    await screenshot(page, 'privacy-framed');
    // The same page in its own tab is the app.
    const own = await context.newPage();
    await own.goto(`${app.origin}/`);
    await own.waitForSelector('#results', { timeout: 60_000 });
    assert.equal(await own.locator('#framed').count(), 0);
  } finally {
    await context.close();
    app.server.close();
    framer.server.close();
  }
});

test('the Evaluate page alone never fetches the lost-in-the-middle data', async () => {
  const { server, origin, served } = await startServer();
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    await page.waitForSelector('#results tbody tr', { timeout: 60_000 });
    // The service worker has installed (its pre-cache fetched) and activated.
    await page.waitForFunction(async () => (await navigator.serviceWorker.ready).active?.state === 'activated',
      null, { timeout: 30_000 });
    assert.ok(served.some((u) => u.endsWith('.wasm')), 'the server saw the app load');
    assert.deepEqual(served.filter((u) => u.includes('litm-nq.json')), []);
  } finally {
    await context.close();
    server.close();
  }
});
