// The release build runs from any sub-path of a static host (no server code) and, after the
// first visit, offline (the service worker caches the app's own files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch } from './harness.mjs';

test('served from a sub-path, then reloaded offline', async () => {
  const prefix = '/some/sub/path/';
  const { server, origin, served } = await startServer(prefix);
  const browser = await launch();
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(origin + prefix);
    await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
    assert.deepEqual(served.filter((u) => !u.startsWith(prefix)), [], 'a request escaped the sub-path');
    await page.waitForFunction(async () => (await navigator.serviceWorker.ready).active?.state === 'activated', null, { timeout: 30_000 });
    await context.setOffline(true);
    await page.reload();
    await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await browser.close();
    server.close();
  }
});
