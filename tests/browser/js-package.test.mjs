// The JS package (pkg/, wasm-bindgen --target web, built by `cargo xtask pkg`) in headless
// Chromium: the example page in www/js-example drives evaluate() and trecEval(); udcg() and
// udcgReference() are called in the page too. Oracles: trec_eval's out.test and the UDCG
// reference implementation's stored scores.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launch, shared, trecSummary } from './harness.mjs';
import { createServer } from 'node:http';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
let site, server, origin, browser;

before(async () => {
  // Always rebuilt (incremental: seconds) so the test never runs a stale package.
  execFileSync('cargo', ['xtask', 'pkg'], { cwd: root, stdio: 'inherit' });
  assert.ok(existsSync(join(root, 'pkg/ragscope_js.js')), 'cargo xtask pkg did not produce pkg/');
  site = await mkdtemp(join(tmpdir(), 'ragscope-js-'));
  await cp(join(root, 'www/js-example'), site, { recursive: true });
  await cp(join(root, 'pkg'), join(site, 'pkg'), { recursive: true });
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };
  server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const file = join(site, path.endsWith('/') ? path + 'index.html' : path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
    } catch { res.writeHead(404).end(); }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
  if (site) await rm(site, { recursive: true, force: true });
});

test('the example page evaluates with the JS package like trec_eval', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(origin + '/');
  await page.waitForSelector('#evaluate:not([disabled])');
  const te = (f) => join(shared, 'data/trec_eval', f);
  await page.setInputFiles('#qrels', te('qrels.test'));
  await page.setInputFiles('#run', te('results.test'));
  await page.click('#evaluate');
  await page.waitForSelector('body[data-done="yes"]');
  const scores = JSON.parse(await page.textContent('#scores'));
  const expected = await trecSummary(te('out.test'));
  assert.equal(scores[0].means.MAP.toFixed(4), expected.get('map'));
  assert.equal(scores[0].means.MRR.toFixed(4), expected.get('recip_rank'));
  assert.equal(scores[0].means['P@10'].toFixed(4), expected.get('P_10'));
  assert.equal(String(scores[0].num_queries), expected.get('num_q'));
  assert.ok(Object.keys(scores[0].per_query).length === Number(expected.get('num_q')));
  // trecEval() prints exactly what trec_eval prints.
  assert.equal(await page.textContent('#trec'), await readFile(te('out.test'), 'utf8'));
  // UDCG: the reference implementation's stored scores.
  const json = await readFile(join(shared, 'data/udcg/dataset_with_udcg.json'), 'utf8');
  const got = await page.evaluate(async (text) => {
    const m = await import('./pkg/ragscope_js.js');
    return m.udcgReference(text);
  }, json);
  const stored = JSON.parse(json);
  assert.equal(got.length, stored.length);
  for (let i = 0; i < stored.length; i++) {
    for (const [model, want] of Object.entries(stored[i].udcg)) {
      assert.ok(Math.abs(got[i][model] - want) < 1e-12, `${i} ${model}: ${got[i][model]} vs ${want}`);
    }
  }
  // Errors come back as exceptions naming the problem.
  const message = await page.evaluate(async () => {
    const m = await import('./pkg/ragscope_js.js');
    try { m.evaluate('1 0 d 1\n', { r: '1 Q0 d 1 x tag\n' }, ['MAP']); return 'no error'; } catch (e) { return e.message; }
  });
  assert.match(message, /r:1:.*'x'/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('TypeScript types ship with the package', async () => {
  const dts = await readFile(join(root, 'pkg/ragscope_js.d.ts'), 'utf8');
  for (const name of ['evaluate', 'trecEval', 'udcg', 'udcgReference', 'RunScores', 'UdcgScores']) {
    assert.match(dts, new RegExp(`\\b${name}\\b`), `${name} missing from ragscope_js.d.ts`);
  }
});

/** The body sizes of a wasm module's functions (its code section), in bytes. */
function functionBodySizes(bytes) {
  let at = 8; // magic and version
  const leb = () => {
    let value = 0, shift = 0, b;
    do { b = bytes[at++]; value += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return value;
  };
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = leb();
    if (id === 10) {
      const sizes = [];
      for (let n = leb(); n > 0; n--) { const s = leb(); sizes.push(s); at += s; }
      return sizes;
    }
    at += size;
  }
  return [];
}

// xtask's build_js runs wasm-opt with --one-caller-inline-max-function-size 100: without it,
// binaryen inlined every function with one caller, evaluate()'s per-run work became one 26 KB
// body whose optimising compile V8 could not use during the call (the first call cost 16 %
// more CPU), and the largest body of the package was 52 KB; with it, 16 KB (2026-11-23).
test('the package keeps its functions small enough for V8 to optimise them early', async () => {
  const sizes = functionBodySizes(await readFile(join(root, 'pkg/ragscope_js_bg.wasm')));
  assert.ok(sizes.length > 300, `read ${sizes.length} function bodies`);
  const largest = Math.max(...sizes);
  assert.ok(largest <= 24_000, `the largest function body is ${largest} bytes`);
});
