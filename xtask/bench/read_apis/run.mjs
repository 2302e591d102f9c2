// Which way of reading a picked File is fastest in this Chromium (headless Debian chromium,
// driven by tests/browser's playwright-core): `node xtask/bench/read_apis/run.mjs FILE`, e.g.
// target/bench/metrics/bench.run. Prints the median and every round of each variant (ms).
// Behind crates/worker/src/engine/blob_load.rs's choice of Blob.stream() in 1 MiB batches; not a test.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from '../../../tests/browser/node_modules/playwright-core/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const file = resolve(process.argv[2] ?? join(here, '../../../target/bench/metrics/bench.run'));
const page = `<!doctype html><input type=file id=f><script>
const w = new Worker('worker.js'); w.onmessage = (e) => { window.results = e.data; };
document.getElementById('f').onchange = (e) => w.postMessage(e.target.files[0]);
</script>`;
const server = createServer(async (req, res) => {
  if (req.url === '/worker.js') {
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(await readFile(join(here, 'worker.js')));
  } else {
    res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  const tab = await browser.newPage();
  await tab.goto(`http://127.0.0.1:${server.address().port}/`);
  await tab.setInputFiles('#f', file);
  await tab.waitForFunction(() => window.results, null, { timeout: 300_000 });
  const results = await tab.evaluate(() => window.results);
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  console.log(`${file}: ms, median of ${Object.values(results)[0].length} rounds (then each round)`);
  for (const [name, ms] of Object.entries(results)) {
    console.log(`  ${name.padEnd(48)} ${median(ms).toFixed(0).padStart(5)}   ${ms.map((x) => x.toFixed(0)).join(' ')}`);
  }
} finally {
  await browser.close();
  server.close();
}
