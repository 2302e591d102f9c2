// The web app end to end: load trec_eval's own test files through the app's code path (file
// input → Blob slices → worker → crates/eval) and compare every number shown, and the CSV
// export, with trec_eval 10.0's output; check privacy (no foreign request, CSP), the UI thread
// (no long task while loading and evaluating), errors, views, and take screenshots.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import {
  startServer, launch, recordRequests, trecSummary, screenshot, shared, artifacts,
  observeLongTasks, longTasks, recordCspViolations,
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
  const csp = recordCspViolations(page);
  await observeLongTasks(page);
  await page.goto(origin + '/' + query);
  await page.waitForSelector('#file-input', { state: 'attached' });
  return { page, errors, requests, csp };
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

const foreign = (requests) => requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));

test('trec_eval test files loaded through the app match trec_eval 10.0, privately and without long tasks', async () => {
  const { page, errors, requests, csp } = await openApp();
  // Let start-up finish first (the worker instantiates its wasm and warms its parsers up): one
  // final run (2026-11-23) saw a 58 ms task about 0.1 s after a 300 ms wait, which this test
  // cannot attribute; what it asserts is that loading and evaluating never block the page.
  await page.waitForTimeout(1500);
  const start = await page.evaluate(() => performance.now());
  await page.setInputFiles('#file-input', [te('qrels.test'), te('results.test')]);
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  const long = (await longTasks(page, start)).filter((t) => t.duration > 50);
  assert.deepEqual(long, [], `UI thread blocked > 50 ms while loading/evaluating: ${JSON.stringify(long)}`);
  const shown = (await tableValues(page))['results.test'];
  const expected = await trecSummary(te('out.test'));
  const compared = Object.keys(shown).filter((name) => expected.has(name));
  assert.ok(compared.length >= 5, `too few measures to compare: ${compared}`);
  for (const name of compared) {
    assert.equal(shown[name], expected.get(name), `${name}: app shows ${shown[name]}, trec_eval ${expected.get(name)}`);
  }
  const numQ = await page.$eval('#results tr[data-run="results.test"] td[data-measure="num_q"]', (td) => td.textContent);
  assert.equal(numQ, expected.get('num_q'));

  // The CSV export carries the same numbers.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const csv = await readFile(await download.path(), 'utf8');
  const [header, row] = csv.trim().split('\n').map((l) => l.split(','));
  const trecOf = { MAP: 'map', MRR: 'recip_rank', 'P@10': 'P_10', bpref: 'bpref', Rprec: 'Rprec' };
  for (const [col, trec] of Object.entries(trecOf)) {
    assert.equal(row[header.indexOf(col)], expected.get(trec), `CSV ${col}`);
  }
  assert.equal(row[header.indexOf('num_q')], expected.get('num_q'));
  await mkdir(artifacts, { recursive: true });
  await writeFile(join(artifacts, 'export.csv'), csv);

  // Private by construction: no request beyond the app's own files, no CSP violation.
  assert.deepEqual(foreign(requests), []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  const policy = await page.$eval('meta[http-equiv="Content-Security-Policy"]', (m) => m.content);
  assert.match(policy, /connect-src 'self'[;\s]/);
  assert.doesNotMatch(policy, /unsafe-inline|__/);
  await screenshot(page, 'desktop-results');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'phone-results');
  await writeFile(join(artifacts, 'compared-measures.txt'), compared.join('\n') + '\n');
  await page.close();
});

test('the bundled RAG demo is preloaded with UDCG; trec_eval\'s test files are one click away; every view renders', async () => {
  const { page, errors, requests } = await openApp('');
  // The default demo: the NQ subset as qrels + run + SmolLM2 utilities, UDCG@5 beside nDCG@5,
  // and SmolLM2's outcomes of its contexts (the correlation view: demo.test.mjs).
  await page.waitForSelector('#results tbody tr[data-run="litm-order.run"] td[data-measure="UDCG@5"]', { timeout: 60_000 });
  assert.deepEqual((await page.$$eval('.file', (li) => li.map((l) => `${l.dataset.file}:${l.dataset.kind}`))).sort(),
    ['contexts.smollm2.jsonl:contexts', 'litm-order.run:run', 'qrels.txt:qrels', 'utilities.smollm2.tsv:utilities']);
  assert.ok(await page.$('#results td[data-measure="nDCG@5"]'));
  await page.click('#tab-rag');
  await page.waitForSelector('#chart-udcg-0 circle');
  await screenshot(page, 'desktop-demo-rag');
  await page.click('#tab-scores');
  await page.click('#demo-trec');
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  await page.waitForFunction(() => document.querySelectorAll('.file').length === 3 && !document.querySelector('.file[data-file="litm-order.run"]'));
  const kinds = await page.$$eval('.file', (li) => li.map((l) => `${l.dataset.file}:${l.dataset.kind}`));
  assert.deepEqual(kinds.sort(), ['qrels.test:qrels', 'results.test:run', 'results.trunc:run']);
  await screenshot(page, 'desktop-demo');
  await page.click('#tab-per-query');
  await page.waitForSelector('#chart-diff rect');
  assert.ok(await page.$$eval('#per-query tbody tr', (r) => r.length) >= 2);
  await page.fill('#pq-filter', '999999');
  assert.equal(await page.$$eval('#per-query tbody tr', (r) => r.length), 0);
  await page.fill('#pq-filter', '');
  await screenshot(page, 'desktop-per-query');
  // Charts export as standalone SVG and as PNG.
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('button[aria-label$="as SVG"]')]);
  const svgText = await readFile(await svg.path(), 'utf8');
  assert.match(svgText, /^<\?xml[^>]*>\n<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('button[aria-label$="as PNG"]')]);
  const pngBytes = await readFile(await png.path());
  assert.deepEqual([...pngBytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  // The HTML report is one self-contained file: the table and the chart on screen, no script,
  // nothing fetched from anywhere.
  await page.click('#tab-scores');
  const [report] = await Promise.all([page.waitForEvent('download'), page.click('#export-html')]);
  const html = await readFile(await report.path(), 'utf8');
  assert.match(html, /<table>.*results\.trunc/s);
  assert.doesNotMatch(html, /<script|src=|href=|url\(/i);
  for (const fmt of ['json', 'tex', 'md']) {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(`#export-${fmt}`)]);
    assert.match(d.suggestedFilename(), new RegExp(`\\.${fmt}$`));
  }
  await page.click('#tab-per-query');
  // Keyboard: arrow keys move between tabs.
  await page.focus('#tab-per-query');
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('#chart-dist path');
  assert.equal(await page.$eval('#tab-distribution', (t) => t.getAttribute('aria-selected')), 'true');
  await screenshot(page, 'desktop-distribution');
  await page.click('#tab-topic');
  await page.waitForSelector('#topic-table tbody tr');
  await screenshot(page, 'desktop-topic');
  // Dark theme (system → light → dark).
  await page.click('#theme');
  await page.click('#theme');
  assert.equal(await page.$eval('html', (h) => h.dataset.theme), 'dark');
  await page.click('#tab-scores');
  await screenshot(page, 'desktop-dark');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'phone-dark');
  assert.deepEqual(foreign(requests), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('measures are searchable, explained, and change the table', async () => {
  const { page } = await openApp('');
  await page.click('#demo-trec');
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  await page.click('.chip.add');
  await page.fill('#measure-search', 'judged');
  // The search looks at names and at the registry's explanations (also the tooltips).
  const options = await page.$$eval('.picker-list label', (l) => l.map((x) => [x.querySelector('input').dataset.measure, x.title]));
  assert.ok(options.some(([m]) => m === 'Judged@10'), JSON.stringify(options));
  for (const [m, tip] of options) assert.match(`${m} ${tip}`, /judged/i);
  assert.ok(options.every(([, tip]) => tip.length > 10), 'a measure without explanation');
  await page.check('.picker-list input[data-measure="Judged@10"]');
  await page.waitForSelector('#results td[data-measure="Judged@10"]');
  await screenshot(page, 'desktop-picker');
  // A typed measure the registry understands is added with Enter.
  await page.fill('#measure-search', 'nDCG@15');
  await page.press('#measure-search', 'Enter');
  await page.waitForSelector('#results td[data-measure="nDCG@15"]');
  // Significance: switch to the randomization test; the baseline is selectable.
  await page.selectOption('#sig-test', 'randomization');
  await page.waitForFunction(() => document.querySelector('#results') && !document.querySelector('#eval-progress'));
  assert.match(await page.textContent('.results .hint:last-child'), /randomization/);
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
  // A recognised format the app cannot read yet says so.
  await page.setInputFiles('#file-input', join(shared, 'data/nuggetizer/pool.jsonl'));
  await page.waitForFunction(() => [...document.querySelectorAll('.error-message')].some((e) => /not support yet/.test(e.textContent)));
  // The good files and their scores are still there.
  assert.equal(await page.$$eval('.file', (li) => li.length), 2);
  assert.ok(await page.$('#results tbody tr[data-run="results.test"]'));
  await screenshot(page, 'desktop-error');
  await page.close();
});

test('UDCG reference JSON shows UDCG against nDCG per example', async () => {
  const { page, errors } = await openApp();
  await page.setInputFiles('#file-input', join(shared, 'data/udcg/dataset_with_udcg.json'));
  await page.waitForSelector('.file[data-kind="udcg-json"]', { timeout: 30_000 });
  await page.click('#tab-rag');
  await page.waitForSelector('#chart-udcg-0 circle');
  assert.equal(await page.$$eval('#chart-udcg-0 circle', (c) => c.length), 3);
  await screenshot(page, 'desktop-rag');
  assert.deepEqual(errors, []);
  await page.close();
});

test('pasted text is loaded like a file', async () => {
  const { page } = await openApp();
  const qrels = await readFile(te('qrels.test'), 'utf8');
  await page.focus('.drop-zone');
  await page.evaluate((text) => {
    const data = new DataTransfer();
    data.setData('text/plain', text);
    document.querySelector('.drop-zone').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true }));
  }, qrels);
  await page.waitForSelector('.file[data-kind="qrels"]', { timeout: 30_000 });
  await page.close();
});

test('files persist only when the user opts in, and "Forget everything" deletes them', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const loadedNames = () => page.$$eval('.file', (li) => li.map((l) => l.dataset.file).sort());
  await page.goto(origin + '/?demo=0');
  await page.waitForSelector('#file-input', { state: 'attached' });
  assert.equal(await page.isChecked('#remember'), false, 'persistence must be off by default');
  await page.setInputFiles('#file-input', [te('qrels.test'), te('results.test')]);
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  // Off: a reload starts empty.
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.waitForTimeout(500);
  assert.deepEqual(await loadedNames(), []);
  // On: the files come back after a reload, and are evaluated again.
  await page.check('#remember');
  await page.setInputFiles('#file-input', [te('qrels.test'), te('results.test')]);
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  await page.waitForTimeout(500);
  await page.reload();
  await page.waitForSelector('#results tbody tr[data-run="results.test"]', { timeout: 60_000 });
  assert.deepEqual(await loadedNames(), ['qrels.test', 'results.test']);
  assert.equal(await page.isChecked('#remember'), true);
  // Forget everything: the page empties, the database is deleted, a reload stays empty.
  await page.click('#forget');
  assert.deepEqual(await loadedNames(), []);
  await page.waitForTimeout(500);
  const dbs = await page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
  assert.ok(!dbs.includes('ragscope'), `database still there: ${dbs}`);
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.waitForTimeout(500);
  assert.deepEqual(await loadedNames(), []);
  assert.equal(await page.isChecked('#remember'), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test('files dropped on the drop zone are loaded, several at once', async () => {
  const { page, errors } = await openApp();
  const [qrels, run, trunc] = await Promise.all(['qrels.test', 'results.test', 'results.trunc'].map((f) => readFile(te(f), 'utf8')));
  await page.evaluate(([q, r, t]) => {
    const data = new DataTransfer();
    data.items.add(new File([q], 'dropped.qrels'));
    data.items.add(new File([r], 'dropped-a.run'));
    data.items.add(new File([t], 'dropped-b.run'));
    document.querySelector('.drop-zone').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, [qrels, run, trunc]);
  await page.waitForSelector('#results tbody tr[data-run="dropped-b.run"]', { timeout: 30_000 });
  await page.waitForSelector('#results tbody tr[data-run="dropped-a.run"]');
  const kinds = await page.$$eval('.file', (li) => li.map((l) => `${l.dataset.file}:${l.dataset.kind}`));
  assert.deepEqual(kinds.sort(), ['dropped-a.run:run', 'dropped-b.run:run', 'dropped.qrels:qrels']);
  assert.deepEqual(errors, []);
  await page.close();
});

/** The UDCG reference file as app inputs: a utilities TSV, a run and qrels. */
async function udcgInputs() {
  const examples = JSON.parse(await readFile(join(shared, 'data/udcg/dataset_with_udcg.json'), 'utf8'));
  const model = 'meta-llama/Llama-3.2-3B-Instruct';
  let tsv = 'qid docno relevant no_res_prob\n', run = '', qrels = '';
  for (const ex of examples) {
    ex.passages.forEach((p, i) => {
      const rel = p.is_relevant ? 1 : 0;
      tsv += `${ex.example_id} ${p.doc_id} ${rel} ${p.models_info[model].no_res_prob}\n`;
      run += `${ex.example_id} Q0 ${p.doc_id} ${i + 1} ${10 - i} tag\n`;
      qrels += `${ex.example_id} 0 ${p.doc_id} ${rel}\n`;
    });
  }
  return { examples, model, tsv, run, qrels };
}

/** A few questions with contexts of 2 passages and their outcomes (correlation study input). */
function contextSets() {
  const lines = [];
  for (let q = 0; q < 6; q++) {
    const passages = {};
    for (let d = 0; d < 4; d++) passages[`d${d}`] = { is_relevant: d < 2, no_res_prob: ((q + 1) * (d + 1) % 7) / 10 };
    const contexts = [
      { passages: ['d0', 'd1'], outcome: 'correct' },
      { passages: ['d0', 'd2'], outcome: q % 2 ? 'correct' : 'abstain' },
      { passages: ['d2', 'd3'], outcome: 'wrong' },
      { passages: ['d3', 'd1'], outcome: q % 3 ? 'abstain' : 'wrong' },
    ];
    lines.push(JSON.stringify({ qid: `q${q}`, dataset: 'toy', model: 'reader', passages, contexts }));
  }
  return lines.join('\n') + '\n';
}

test('RAG: UDCG from a utilities file (table, scatter, drill-down) and the correlation study', async () => {
  const { page, errors } = await openApp('?demo=0&measures=UDCG(compat=udcg-ref)@5,nDCG@5');
  const { examples, model, tsv, run, qrels } = await udcgInputs();
  const file = (name, text) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(text) });
  await page.setInputFiles('#file-input', [file('udcg.qrels', qrels), file('utilities.tsv', tsv), file('passages.run', run)]);
  await page.waitForSelector('.file[data-kind="utilities"]', { timeout: 30_000 });
  await page.waitForSelector('#results tbody tr[data-run="passages.run"]', { timeout: 30_000 });
  // The mean of the reference's stored scores, shown like every mean (4 decimals).
  const mean = examples.reduce((s, e) => s + e.udcg[model], 0) / examples.length;
  const shown = await page.$eval('#results td[data-measure="UDCG(compat=udcg-ref)@5"] .v', (e) => e.textContent);
  assert.equal(shown, mean.toFixed(4));
  await page.setInputFiles('#file-input', file('study.jsonl', contextSets()));
  await page.waitForSelector('.file[data-kind="contexts"]', { timeout: 30_000 });
  await page.click('#tab-rag');
  await page.waitForSelector('#chart-udcg-0 circle');
  assert.equal(await page.$$eval('#chart-udcg-0 circle', (c) => c.length), examples.length);
  await page.waitForSelector('table.study tbody tr');
  const metrics = await page.$$eval('table.study tbody th', (t) => t.map((x) => x.textContent));
  assert.ok(metrics.includes('UDCG') && metrics.includes('nDCG'), metrics.join(','));
  await screenshot(page, 'desktop-rag-study');
  await page.click('#tab-topic');
  await page.waitForSelector('#topic-table tbody tr');
  const header = await page.$$eval('#topic-table thead th', (t) => t.map((x) => x.textContent));
  assert.ok(header.includes('utility'), header.join(','));
  await screenshot(page, 'desktop-topic-utilities');
  assert.deepEqual(errors, []);
  await page.close();
});
