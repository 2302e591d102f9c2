// The release build (`cargo xtask site`) runs from any sub-path of a plain static host (no
// server code) and, after the first visit, offline (the service worker caches the app's own
// files): the app with its default RAG demo and the Learn pages render with no console error
// and no request to another origin or outside the sub-path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch, recordRequests } from './harness.mjs';

const DEMO_ROW = '#results tbody tr[data-run="litm-order.run"] td[data-measure="UDCG@5"]';

test('served from a sub-path, then reloaded offline', async () => {
  const prefix = '/some/sub/path/';
  const { server, origin, served } = await startServer(prefix);
  const browser = await launch();
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    const requests = recordRequests(page);
    await page.goto(origin + prefix);
    await page.waitForSelector(DEMO_ROW, { timeout: 60_000 });
    // The Learn pages, reached through the header's links (hash routes).
    await page.click('#nav-learn');
    await page.click('a[href="#/learn/udcg-vs-ndcg"]');
    await page.waitForSelector('#cards li.card[data-docno]');
    await page.waitForSelector('#real-question option[value]:not([value=""])', { state: 'attached' });
    await page.goto(origin + prefix + '#/learn/lost-in-the-middle');
    await page.waitForSelector('#litm-title');
    assert.deepEqual(served.filter((u) => !u.startsWith(prefix)), [], 'a request escaped the sub-path');
    assert.deepEqual(requests.filter((u) => !u.startsWith(origin + prefix) && !/^(blob|data):/.test(u)), [], 'a request left the site');
    await page.waitForFunction(async () => (await navigator.serviceWorker.ready).active?.state === 'activated', null, { timeout: 30_000 });
    await context.setOffline(true);
    await page.goto(origin + prefix + '#/learn/udcg-vs-ndcg');
    await page.reload();
    await page.waitForSelector('#cards li.card[data-docno]', { timeout: 60_000 });
    await page.waitForSelector('#real-question option[value]:not([value=""])', { state: 'attached', timeout: 60_000 });
    await page.goto(origin + prefix);
    await page.reload();
    await page.waitForSelector(DEMO_ROW, { timeout: 60_000 });
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await browser.close();
    server.close();
  }
});
