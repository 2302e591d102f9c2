// The Answers view end to end: nuggetizer assignment files (the anchor's and the oracle's
// generated runs), its nuggets file and a TREC 2024 RAG answer loaded through the file input;
// every nugget score the app shows equals `ragscope nuggets score --format json` in each mode;
// the Pareto chart, the nugget matrix and the drill-down render; screenshots of each part.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startServer, launch, screenshot, shared } from './harness.mjs';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
const fixtures = join(root, 'crates/eval/tests/fixtures/answers');
const nz = (f) => join(shared, 'data/nuggetizer', f);
const files = [join(fixtures, 'run-alpha.jsonl'), join(fixtures, 'run-beta.jsonl'),
  nz('assignments.jsonl'), nz('nuggets.jsonl'), nz('readme_trec2024_rag_answer_example.json')];
const scored = [files[0], files[1], files[2]];

let server, origin, browser, cli;

before(async () => {
  execFileSync('cargo', ['build', '-p', 'ragscope-cli'], { cwd: root, stdio: 'inherit' });
  cli = join(root, 'target/debug/ragscope');
  ({ server, origin } = await startServer());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

function cliScores(mode) {
  const out = execFileSync(cli, ['nuggets', 'score', '--compat', mode, '--format', 'json', ...scored]);
  return JSON.parse(out.toString());
}

/** { run → { score → full-precision value } } as the table holds it. */
async function shownScores(page) {
  return page.$$eval('#answers-scores tbody tr', (rows) => Object.fromEntries(rows.map((row) => [
    row.dataset.run,
    Object.fromEntries([...row.querySelectorAll('td[data-value]')]
      .map((td) => [td.dataset.measure, Number(td.dataset.value)])),
  ])));
}

test('nugget scores in the Answers view equal the CLI in every mode; charts, matrix and drill-down render', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(origin + '/?demo=0');
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.setInputFiles('#file-input', files);
  await page.click('#tab-answers');
  await page.waitForSelector('#answers-scores tbody tr[data-run="run-alpha"]', { timeout: 60_000 });
  await page.waitForSelector('#answers-scores tbody tr[data-run="demo-run"]', { timeout: 60_000 });

  const modes = ['paper', 'nuggetizer', 'open-rag-eval'];
  for (const [i, mode] of modes.entries()) {
    await page.selectOption('#answers-mode', String(i));
    await page.waitForTimeout(100);
    const shown = await shownScores(page);
    const expected = cliScores(mode);
    assert.deepEqual(Object.keys(shown), expected.runs.map((r) => r.run_id), `${mode}: runs in load order`);
    for (const run of expected.runs) {
      for (const [name, value] of Object.entries(run.mean)) {
        assert.equal(shown[run.run_id][name], value, `${mode} ${run.run_id} ${name}`);
      }
    }
  }
  // V_strict is the first score column.
  const firstScore = await page.$eval('#answers-scores thead th:nth-child(3)', (th) => th.textContent.trim());
  assert.equal(firstScore, 'V_strict');
  await page.selectOption('#answers-mode', '0');
  await page.waitForTimeout(100);

  // Pareto chart: one point per run, at least one on the frontier.
  const points = await page.$$eval('#chart-answers-pareto g.point', (g) => g.length);
  assert.equal(points, 3);
  const front = await page.$$eval('#chart-answers-pareto g.point.frontier', (g) => g.map((x) => x.dataset.run));
  assert.ok(front.length >= 1, 'a Pareto frontier');
  await screenshot(page, 'answers-scores');

  // The nugget matrix of the anchor's topic: vital first, cells per run.
  await page.selectOption('#answers-topic', 'q1');
  await page.waitForSelector('#answers-matrix');
  const rows = await page.$$eval('#answers-matrix tbody tr', (trs) => trs.map((tr) => ({
    nugget: tr.querySelector('th').textContent, importance: tr.querySelector('td').textContent,
    cells: [...tr.querySelectorAll('td.cell')].map((td) => td.dataset.cell),
  })));
  assert.deepEqual(rows.map((r) => r.importance), ['vital', 'okay']);
  assert.deepEqual(rows[0].cells, ['absent', 'absent', 'support']);
  assert.deepEqual(rows[1].cells, ['absent', 'absent', 'partial']);
  await page.$eval('#answers-matrix', (el) => el.scrollIntoView());
  await screenshot(page, 'answers-matrix');

  // Drill-down: the TREC RAG answer with its citations; the anchor's answer with its nuggets.
  const options = await page.$$eval('#answers-detail option', (o) => o.map((x) => [x.value, x.textContent]));
  const rag = options.find(([, label]) => label.startsWith('ragnarok'));
  assert.ok(rag, `no ragnarok answer in ${JSON.stringify(options.slice(0, 5))}`);
  await page.selectOption('#answers-detail', rag[0]);
  const cites = await page.$$eval('#answers-drill sup.cite', (s) => s.length);
  assert.equal(cites, 26, 'citations of the README example');
  await page.$eval('#answers-drill', (el) => el.scrollIntoView());
  await screenshot(page, 'answers-drill-down');
  const demo = options.find(([, label]) => label.startsWith('demo-run'));
  await page.selectOption('#answers-detail', demo[0]);
  const nuggets = await page.$$eval('#answers-drill li', (li) => li.map((x) => x.dataset.assignment));
  assert.deepEqual(nuggets, ['support', 'partial_support']);

  // The table exports as CSV with V_strict.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#answers-export-csv')]);
  const { readFile } = await import('node:fs/promises');
  const csv = await readFile(await download.path(), 'utf8');
  assert.ok(csv.split('\n')[0].includes('V_strict'), csv.split('\n')[0]);
  assert.deepEqual(errors, []);
  await page.close();
});
