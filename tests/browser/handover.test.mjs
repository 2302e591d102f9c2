// How a picked file reaches the worker (crates/platform/src/blob_channel.rs): the page posts it on the files
// channel the worker joined at the start, before the worker asks for it ("posted at once");
// when that post is lost, the worker asks on the file's own channel ("ready") and the page
// answers ("asked for"). Both ways load the file with the same numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startServer, launch } from './harness.mjs';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
const dir = join(root, 'target/e2e-handover');
let server, origin, browser;
const files = {};

before(async () => {
  await mkdir(dir, { recursive: true });
  files.qrels = join(dir, 'handover.qrels');
  await writeFile(files.qrels, 'q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n');
  files.run = join(dir, 'handover.run');
  await writeFile(files.run, 'q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 1.0 t\n');
  ({ server, origin } = await startServer());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

/** Loads the qrels and the run in a fresh page; how each came to the worker, and MAP. */
async function loadBoth(dropPosts) {
  const page = await browser.newPage();
  if (dropPosts) {
    // a page whose posts on the files channel are lost ([name, Blob] pairs; "ready" answers
    // are single Blobs)
    await page.addInitScript(() => {
      const post = BroadcastChannel.prototype.postMessage;
      BroadcastChannel.prototype.postMessage = function (data) {
        if (!Array.isArray(data)) post.call(this, data);
      };
    });
  }
  await page.goto(`${origin}/?demo=0&measures=MAP`);
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.setInputFiles('#file-input', files.qrels);
  await page.waitForSelector('.file[data-kind="qrels"]');
  await page.setInputFiles('#file-input', files.run);
  await page.waitForSelector('#results tbody tr[data-run="handover.run"]');
  const how = await page.evaluate(() => (window.ragscopeTimings ?? [])
    .filter((t) => t.what.startsWith('load '))
    .map((t) => [t.what, t.phases[0][0]]));
  const map = await page.textContent('#results tr[data-run="handover.run"] td[data-trec="map"] .v');
  await page.close();
  return { how: Object.fromEntries(how), map: map.trim() };
}

test('a picked file is posted to the worker at once', async () => {
  const { how, map } = await loadBoth(false);
  // the qrels, picked as the page opens, may come before the worker is up (and has joined the
  // channel): then it is asked for; the run, picked once the qrels are loaded, is not
  assert.match(how['load handover.qrels'], /^the Blob from the page \((posted at once|asked for)\)$/);
  assert.equal(how['load handover.run'], 'the Blob from the page (posted at once)');
  // q1: d1 (relevant) at rank 2 -> 0.5; q2: d3 at rank 1 -> 1
  assert.equal(map, '0.7500');
});

test('a lost post: the worker asks for the file and gets it', async () => {
  const { how, map } = await loadBoth(true);
  assert.deepEqual(how, {
    'load handover.qrels': 'the Blob from the page (asked for)',
    'load handover.run': 'the Blob from the page (asked for)',
  });
  assert.equal(map, '0.7500');
});
