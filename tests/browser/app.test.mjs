// The web app end to end: load trec_eval's own test files through the app's code path (file
// input → worker → crates/eval) and compare every number shown with trec_eval 10.0's output.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFile, mkdir } from 'node:fs/promises';
import {
  startServer, launch, recordRequests, trecSummary, screenshot, shared, artifacts,
} from './harness.mjs';

let server, origin, browser;
const te = (f) => join(shared, 'data/trec_eval', f);

before(async () => {
  ({ server, origin } = await startServer());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

async function openApp(query = '?demo=0', viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const requests = recordRequests(page);
  await page.goto(origin + '/' + query);
  return { page, errors, requests };
}

/** The table as { run → { trecName → shown text } }. */
async function tableValues(page) {
  return page.$$eval('#results tbody tr', (rows) => Object.fromEntries(rows.map((row) => [
    row.dataset.run,
    Object.fromEntries([...row.querySelectorAll('td[data-trec]')]
      .filter((td) => td.dataset.trec)
      .map((td) => [td.dataset.trec, td.querySelector('.v').textContent.trim()])),
  ])));
}

test('trec_eval test files loaded through the app match trec_eval 10.0 (out.test)', async () => {
  const { page, errors, requests } = await openApp();
  await page.setInputFiles('#file-input', [te('qrels.test'), te('results.test')]);
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  const shown = (await tableValues(page))['results.test'];
  const expected = await trecSummary(te('out.test'));
  const compared = Object.keys(shown).filter((name) => expected.has(name));
  assert.ok(compared.length >= 5, `too few measures to compare: ${compared}`);
  for (const name of compared) {
    assert.equal(shown[name], expected.get(name), `${name}: app shows ${shown[name]}, trec_eval ${expected.get(name)}`);
  }
  const numQ = await page.$eval('#results tr[data-run="results.test"] td[data-measure="num_q"]', (td) => td.textContent);
  assert.equal(numQ, expected.get('num_q'));
  // Private by construction: evaluating made no request beyond the app's own files.
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(foreign, []);
  assert.deepEqual(errors, []);
  await screenshot(page, 'desktop-results');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'phone-results');
  await mkdir(artifacts, { recursive: true });
  await writeFile(join(artifacts, 'compared-measures.txt'), compared.join('\n') + '\n');
  await page.close();
});

test('the bundled demo is preloaded and evaluated', async () => {
  const { page, errors } = await openApp('');
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  const kinds = await page.$$eval('.file', (li) => li.map((l) => `${l.dataset.file}:${l.dataset.kind}`));
  assert.deepEqual(kinds.sort(), ['qrels.test:qrels', 'results.test:run', 'results.trunc:run']);
  assert.deepEqual(errors, []);
  await screenshot(page, 'desktop-demo');
  await page.close();
});

test('a bad file shows file, line and reason, and loses nothing already loaded', async () => {
  const { page } = await openApp();
  await page.setInputFiles('#file-input', [te('qrels.test'), te('results.test')]);
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  const bad = '301 Q0 doc-a 1 0.5 tagged\n301 Q0 doc-b 2 not-a-number tagged\n';
  await page.setInputFiles('#file-input', { name: 'broken.run', mimeType: 'text/plain', buffer: Buffer.from(bad) });
  const message = await page.waitForSelector('.error-panel .error-message', { timeout: 30_000 });
  const text = await message.textContent();
  assert.match(text, /broken\.run/);
  assert.match(text, /line 2|:2[:\s]/);
  assert.match(text, /not-a-number/);
  // The good files and their scores are still there.
  assert.equal(await page.$$eval('.file', (li) => li.length), 2);
  assert.ok(await page.$('#results tbody tr[data-run="results.test"]'));
  await screenshot(page, 'desktop-error');
  await page.close();
});
