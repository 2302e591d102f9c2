// The default RAG demo's correlation view and the Learn page's "recompute with your model", end
// to end:
// - at first load (no click but the RAG tab) the correlation study of the bundled context sets
//   (www/demo/nq/contexts.smollm2.jsonl, SmolLM2's outcomes from `cargo xtask learn-data`) is
//   shown, and its every number equals `ragscope correlate` on the same files;
// - on #/learn/udcg-vs-ndcg, a real question's passages rescored with a GGUF picked in the page
//   (the tiny llama.cpp oracle model crates/infer/tests/fixtures/llama-f32.gguf) equal
//   `ragscope utility --backend cpu` on the same question and passage texts (1e-5 relative), the
//   cards are labelled with the model's name; a cancelled run changes nothing;
// - no request leaves the app's origin, no console error, axe-core finds no serious violation on
//   either changed page; screenshots for a person to look at.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { startServer, launch, recordRequests, screenshot, dist } from './harness.mjs';

const root = resolve(import.meta.dirname, '../..');
const fixtures = resolve(process.env.RAGSCOPE_INFER_FIXTURES ?? join(root, 'crates/infer/tests/fixtures'));
const MODEL = join(fixtures, 'llama-f32.gguf');
/** The page computes in f32 on the CPU like the CLI (compute.test.mjs uses 2e-5 vs llama.cpp). */
const P_REL_TOL = 1e-5;
let server, origin, browser, cli;

before(async () => {
  cli = process.env.RAGSCOPE_CLI ?? join(root, 'target/debug/ragscope');
  if (!existsSync(cli)) execFileSync('cargo', ['build', '-p', 'ragscope-cli'], { cwd: root, stdio: 'inherit' });
  ({ server, origin } = await startServer());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

const foreign = (requests) => requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));

async function open(url, contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, ...contextOptions });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const requests = recordRequests(page);
  await page.goto(url);
  return { context, page, errors, requests };
}

async function axeSerious(page) {
  const require = createRequire(import.meta.url);
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const result = await page.evaluate(async () => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

test('the demo shows the correlation study at first load, equal to ragscope correlate', async () => {
  // axe is injected as a script: this context bypasses the page's CSP for it only.
  const { context, page, errors, requests } = await open(`${origin}/`, { bypassCSP: true });
  await page.waitForSelector('.file[data-kind="contexts"]', { timeout: 60_000 });
  await page.click('#tab-rag');
  await page.waitForSelector('table.study tr[data-metric]', { timeout: 60_000 });
  assert.match(await page.textContent('#demo-outcomes-note'), /SmolLM2-135M-Instruct/);
  assert.match(await page.textContent('#demo-outcomes-note'), /substitutes/);
  const shown = await page.$$eval('table.study', (tables) => tables.map((t) => ({
    questions: Number(t.dataset.questions),
    k: Number(t.dataset.k),
    rows: [...t.querySelectorAll('tr[data-metric]')].map((r) => ({
      metric: r.dataset.metric,
      spearman: Number(r.dataset.spearman),
      ci_low: Number(r.dataset.ciLow),
      ci_high: Number(r.dataset.ciHigh),
      kendall: Number(r.dataset.kendall),
      pearson: Number(r.dataset.pearson),
    })),
  })));
  // The CLI on the same files the demo loads (from dist/, what the page fetched).
  const demo = join(dist, 'demo/nq');
  const expected = JSON.parse(execFileSync(cli, ['correlate', join(demo, 'contexts.smollm2.jsonl'),
    '--utilities', join(demo, 'utilities.smollm2.tsv'), '--format', 'json'], { encoding: 'utf8' }));
  assert.equal(shown.length, expected.groups.length);
  for (const [g, want] of expected.groups.entries()) {
    const got = shown[g];
    assert.equal(got.questions, want.questions);
    assert.ok(want.questions >= 2, `the demo's study uses ${want.questions} questions`);
    assert.equal(got.k, want.k);
    assert.deepEqual(got.rows.map((r) => r.metric), want.metrics.map((m) => m.metric));
    for (const [i, m] of want.metrics.entries()) {
      const r = got.rows[i];
      // Same code on both sides (crates/eval); the math library differs by an ulp or so.
      const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-12, `${m.metric} ${what}: page ${a} vs ragscope correlate ${b}`);
      close(r.spearman, m.spearman.mean, 'Spearman');
      close(r.ci_low, m.spearman.ci_low, 'CI low');
      close(r.ci_high, m.spearman.ci_high, 'CI high');
      close(r.kendall, m.kendall_tau_b.mean, 'Kendall');
      close(r.pearson, m.pearson.mean, 'Pearson');
    }
  }
  await screenshot(page, 'demo-rag-correlation');
  assert.deepEqual(await axeSerious(page), []);
  assert.deepEqual(foreign(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});

/** The page's passages as the generator wrote them (learn/nq-smollm2.json, fetched by the page). */
async function learnData() {
  return JSON.parse(await readFile(join(dist, 'learn/nq-smollm2.json'), 'utf8'));
}

/** The context the page loads for a question (gold first, then the first four distractors). */
const contextOf = (q) => [...q.passages.filter((p) => p.relevant), ...q.passages.filter((p) => !p.relevant).slice(0, 4)];

/** `ragscope utility` (run mode, CPU) on the question and the passages' texts, by card docno. */
async function cliUtilities(q, cards) {
  const dir = await mkdtemp(join(tmpdir(), 'ragscope-recompute-'));
  const byP = new Map(contextOf(q).map((p) => [`${p.relevant}:${p.p_no_response}`, p]));
  const passages = cards.map((c) => {
    const p = byP.get(`${c.relevant}:${c.p}`);
    assert.ok(p, `card ${c.docno} is one of the question's passages`);
    return { docno: c.docno, text: `(Title: ${p.title}) ${p.text}` };
  });
  await writeFile(join(dir, 'topics.tsv'), `${q.qid}\t${q.question}\n`);
  await writeFile(join(dir, 'passages.jsonl'), passages.map((p) => JSON.stringify(p)).join('\n') + '\n');
  await writeFile(join(dir, 'qrels'), cards.map((c) => `${q.qid} 0 ${c.docno} ${c.relevant ? 1 : 0}`).join('\n') + '\n');
  await writeFile(join(dir, 'run'), cards.map((c, i) => `${q.qid} Q0 ${c.docno} ${i + 1} ${cards.length - i} t`).join('\n') + '\n');
  execFileSync(cli, ['utility', '--model', MODEL, '--backend', 'cpu', '--quiet', '--topics', join(dir, 'topics.tsv'),
    '--passages', join(dir, 'passages.jsonl'), '--qrels', join(dir, 'qrels'), '--run', join(dir, 'run'),
    '--k', String(cards.length), '-o', join(dir, 'u.tsv')]);
  const out = new Map();
  for (const line of (await readFile(join(dir, 'u.tsv'), 'utf8')).trim().split('\n').slice(1)) {
    const [, docno, , p] = line.split('\t');
    out.set(docno, Number(p));
  }
  return out;
}

const cards = (page) => page.$$eval('#cards li.card[data-docno]', (li) => li.map((l) => ({
  docno: l.dataset.docno, relevant: l.dataset.relevant === 'true', p: Number(l.dataset.p),
})));

test('recompute with your model: the page\'s utilities equal ragscope utility on the same passages', async () => {
  const data = await learnData();
  // The question whose five passages are shortest: the tiny oracle model has a 1,024-token window.
  const size = (q) => Math.max(...contextOf(q).map((p) => p.title.length + p.text.length));
  const q = [...data.questions].sort((a, b) => size(a) - size(b))[0];
  const { context, page, errors, requests } = await open(`${origin}/?demo=0#/learn/udcg-vs-ndcg`, { bypassCSP: true });
  await page.waitForSelector('#real-question option[value]:not([value=""])', { state: 'attached' });
  // The guided step's made-up cards have no text to give a model.
  assert.equal(await page.$eval('#recompute-start', (b) => b.disabled), true);
  await page.selectOption('#real-question', q.qid);
  await page.waitForFunction(() => document.querySelectorAll('#cards li.card .card-text').length === 5);
  const before = await cards(page);
  const expected = await cliUtilities(q, before);
  await page.setInputFiles('#recompute-model', MODEL);
  await page.waitForFunction(() => /Model: /.test(document.querySelector('#recompute-status')?.textContent ?? ''), null, { timeout: 60_000 });
  assert.match(await page.textContent('#recompute-status'), /llama-f32/);
  await page.selectOption('#recompute-backend', 'cpu');
  // Cancel: the progress goes, the cards keep their utilities (a result that arrives after the
  // click is not applied either).
  await page.click('#recompute-start');
  await page.click('#recompute-cancel');
  await page.waitForFunction(() => !document.querySelector('#recompute-start').disabled && !document.querySelector('#recompute-progress'));
  assert.equal(await page.$('#recompute-done'), null);
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(await cards(page), before);
  await page.click('#recompute-start');
  await page.waitForSelector('#recompute-done', { timeout: 120_000 });
  assert.match(await page.textContent('#recompute-done'), /5 passages scored by llama-f32/);
  const after = await cards(page);
  assert.deepEqual(after.map((c) => c.docno), before.map((c) => c.docno));
  for (const c of after) {
    const want = expected.get(c.docno);
    assert.ok(Math.abs(c.p - want) <= P_REL_TOL * Math.max(Math.abs(want), 1e-30),
      `${c.docno}: page p ${c.p} vs ragscope utility ${want}`);
  }
  // The cards say whose utilities they now hold.
  const labels = await page.$$eval('#cards .u-from', (s) => s.map((x) => x.textContent));
  assert.deepEqual(labels, Array(5).fill('u by llama-f32'));
  assert.ok(after.some((c, i) => c.p !== before[i].p), 'the utilities changed');
  await screenshot(page, 'learn-recomputed');
  assert.deepEqual(await axeSerious(page), []);
  assert.deepEqual(foreign(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});
