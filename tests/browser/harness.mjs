// Shared set-up for the end-to-end tests: a static server over the built site (dist/) on
// loopback and Debian's headless Chromium driven by playwright-core (no browser download).
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFile, mkdir } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { chromium } from 'playwright-core';

export const dist = resolve(process.env.RAGSCOPE_DIST ?? '../../dist');
export const shared = resolve(process.env.RAGSCOPE_SHARED ?? '../../../shared');
export const artifacts = resolve(process.env.RAGSCOPE_ARTIFACTS ?? '../../target/e2e-artifacts');

const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml', '.mjs': 'text/javascript',
};

/** Serves dist/ (or `site`, another build of it) under `prefix` (e.g. '/some/sub/path/') to
 * check the site works from a sub-path. */
export async function startServer(prefix = '/', site = dist) {
  const served = [];
  const server = createServer(async (req, res) => {
    served.push(req.url);
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (!path.startsWith(prefix)) { res.writeHead(404).end('outside the site'); return; }
    path = '/' + path.slice(prefix.length);
    const file = normalize(join(site, path.endsWith('/') ? path + 'index.html' : path));
    if (!file.startsWith(site)) { res.writeHead(403).end(); return; }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return { server, served, origin: `http://127.0.0.1:${port}` };
}

/** Headless Chromium. `extraArgs`: e.g. WEBGPU_ARGS for WebGPU on SwiftShader (no GPU needed);
 * RAGSCOPE_CHROMIUM_ARGS (space separated) adds flags for experiments. */
export async function launch(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', ...extraArgs,
      ...(process.env.RAGSCOPE_CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)],
  });
}

/** WebGPU in headless Chromium without a GPU: a SwiftShader adapter (as tests/wasm/webdriver.json). */
/**
 * Marks the running test as skipped (node's summary counts it as skipped, never as passed) and
 * says why on stderr. The caller returns, or leaves out the assertions the missing tool needed.
 */
export function skip(t, reason) {
  console.error(`SKIPPED: ${reason}`);
  t.skip(reason);
}

export const WEBGPU_ARGS = ['--enable-unsafe-webgpu', '--enable-unsafe-swiftshader'];

/** Every request a page makes, to check that nothing leaves the app's own origin. */
export function recordRequests(page) {
  const urls = [];
  page.on('request', (r) => urls.push(r.url()));
  return urls;
}

/** trec_eval's summary lines (`measure all value`) as a map. */
export async function trecSummary(file) {
  const text = await readFile(file, 'utf8');
  const values = new Map();
  for (const line of text.split('\n')) {
    const [name, topic, value] = line.split('\t').map((s) => s?.trim());
    if (topic === 'all') values.set(name, value);
  }
  return values;
}

export async function screenshot(page, name) {
  await mkdir(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

/** The files, loads under way and errors the page shows: said when a file never shows as
 * loaded, an occasional failure not reproduced (perf-marks.mjs, judges.test.mjs). */
export async function whatThePageShows(page) {
  return page.evaluate(() => ({
    files: [...document.querySelectorAll('.file, .progress-row')].map((f) => f.outerHTML.slice(0, 500)),
    errors: [...document.querySelectorAll('.error, .error-message')].map((x) => x.textContent),
  }));
}

/** Records long tasks (main thread busy > 50 ms) from page start; read with `longTasks(page)`. */
export async function observeLongTasks(page) {
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
}

export async function longTasks(page, since = 0) {
  return page.evaluate((t) => window.__longTasks.filter((e) => e.start >= t), since);
}

/** Content-Security-Policy violations reported by the page. */
export function recordCspViolations(page) {
  const seen = [];
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) seen.push(m.text()); });
  return seen;
}

/**
 * Starts crates/judge-fake's fake LLM provider on a free loopback port with a scenario ("markers",
 * "shifted", …): the prebuilt binary from RAGSCOPE_FAKE_PROVIDER (what `cargo xtask test` builds),
 * else `cargo run` in the repository at RAGSCOPE_ROOT. Returns the child and its origin.
 */
export async function startFakeProvider(scenario = 'markers') {
  const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
  const bin = process.env.RAGSCOPE_FAKE_PROVIDER;
  const [cmd, args] = bin
    ? [bin, ['--port', '0', '--scenario', scenario]]
    : ['cargo', ['run', '--quiet', '-p', 'ragscope-judge-fake', '--bin', 'fake_provider',
      '--', '--port', '0', '--scenario', scenario]];
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((ok, fail) => {
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`fake_provider exited with ${code}`)));
    createInterface({ input: child.stdout }).once('line', ok);
  });
  const port = Number(line.trim());
  if (!(port > 0)) throw new Error(`fake_provider printed ${line}`);
  return { child, origin: `http://127.0.0.1:${port}` };
}
