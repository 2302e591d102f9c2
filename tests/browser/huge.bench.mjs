// Stress benchmark, run by `cargo xtask bench browser huge` (it writes a 500 MB file under target/bench): a
// 500 MB run must load and evaluate in a tab. The worker reads the File itself as a stream, in
// 1 MiB batches (the page reads none of it), and keeps only the parsed run, so this checks that
// nothing runs out of memory, that the UI thread stays free, and reports the time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startServer, launch, observeLongTasks, longTasks } from './harness.mjs';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');

async function writeHugeRun(path, queries) {
  const out = createWriteStream(path);
  let x = 12345;
  const rand = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let q = 0; q < queries; q++) {
    let chunk = '';
    for (let r = 1; r <= 1000; r++) chunk += `q${q} Q0 doc${Math.floor(rand() * 1e7)}_${r} ${r} ${(1000 - r) / 10} huge\n`;
    if (!out.write(chunk)) await new Promise((ok) => out.once('drain', ok));
  }
  await new Promise((ok) => out.end(ok));
}

test('a 500 MB run loads and evaluates in a tab', { timeout: 900_000 }, async () => {
  const dir = join(root, 'target/bench/huge');
  await mkdir(dir, { recursive: true });
  const run = join(dir, 'huge.run');
  const queries = 14_000;
  if (!existsSync(run)) await writeHugeRun(run, queries);
  const qrels = join(dir, 'huge.qrels');
  if (!existsSync(qrels)) {
    const out = createWriteStream(qrels);
    for (let q = 0; q < queries; q++) out.write(`q${q} 0 doc_rel${q} 1\n`);
    await new Promise((ok) => out.end(ok));
  }
  const size = statSync(run).size;
  assert.ok(size > 500e6, `only ${size} bytes`);
  const { server, origin } = await startServer();
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('crash', () => errors.push('page crashed'));
    await observeLongTasks(page);
    await page.goto(`${origin}/?demo=0&measures=MAP,P@10`);
    await page.setInputFiles('#file-input', qrels);
    await page.waitForSelector('.file[data-kind="qrels"]');
    const since = await page.evaluate(() => performance.now());
    const t0 = Date.now();
    await page.setInputFiles('#file-input', run);
    await page.waitForSelector('#results tbody tr[data-run="huge.run"]', { timeout: 800_000 });
    const seconds = (Date.now() - t0) / 1000;
    const end = await page.evaluate(() => performance.now());
    console.log(`window: ${since.toFixed(0)}..${end.toFixed(0)} ms`);
    const long = await longTasks(page, since);
    const numQ = await page.$eval('#results tr[data-run="huge.run"] td[data-measure="num_q"]', (td) => td.textContent);
    console.log(`huge.run: ${(size / 1e6).toFixed(0)} MB, ${numQ} queries evaluated in ${seconds.toFixed(1)} s; long tasks: ${long.length} (longest ${long.reduce((m, t) => Math.max(m, t.duration), 0).toFixed(0)} ms)`);
    assert.equal(numQ, String(queries));
    assert.deepEqual(errors, []);
    assert.ok(long.every((t) => t.duration <= 50), JSON.stringify(long));
  } finally {
    await browser.close();
    server.close();
  }
});
