// Where the browser's time goes while a file loads and is evaluated: the page's marks (input
// change, row shown) and the worker's timings (window.ragscopeTimings, src/ui/perf_marks.rs).
import { observeLongTasks, longTasks, whatThePageShows } from './harness.mjs';

/** Marks, on the page's wall clock, the input's change event and the run's row appearing. */
export async function watchLoad(page, row = '#results tbody tr[data-run="bench.run"]') {
  await page.evaluate((row) => {
    const clock = () => performance.timeOrigin + performance.now();
    window.perfMarks = {};
    const onChange = (e) => {
      if (e.target?.id !== 'file-input') return;
      window.perfMarks.change = clock();
      document.removeEventListener('change', onChange, true);
    };
    document.addEventListener('change', onChange, true);
    const observer = new MutationObserver(() => {
      if (document.querySelector(row)) { window.perfMarks.row = clock(); observer.disconnect(); }
    });
    observer.observe(document.body, { subtree: true, childList: true });
  }, row);
}

/** The worker's timings (window.ragscopeTimings) of the last load and evaluation, as lines. */
export async function timeBreakdown(page, calledAt) {
  const { marks, timings } = await page.evaluate(() => ({ marks: window.perfMarks, timings: window.ragscopeTimings ?? [] }));
  const t = (ms) => `${(ms - marks.change).toFixed(0)}`;
  const after = timings.filter((x) => (x.start_ms ?? x.at_ms) >= marks.change && (x.end_ms ?? x.at_ms) <= marks.row + 1);
  const load = after.filter((x) => x.what.startsWith('load ')).pop();
  const evaluation = after.filter((x) => x.what.startsWith('evaluate')).pop();
  const report = after.filter((x) => x.what.startsWith('report')).pop();
  const lines = [];
  if (calledAt) lines.push(`${(calledAt - marks.change).toFixed(0)}: setInputFiles called (Playwright hands the file to the page)`);
  lines.push('0: change event on the file input');
  const phases = (x) => x.phases.map(([name, ms]) => `      ${name}: ${ms.toFixed(0)} ms`);
  const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  if (load) {
    lines.push(`${t(load.start_ms)}: the worker starts reading (page -> worker: LoadBlob)`);
    lines.push(`${t(load.end_ms)}: loaded, ${(load.end_ms - load.start_ms).toFixed(0)} ms in the worker:`, ...phases(load));
    lines.push(`      wasm memory after loading: ${mib(load.wasm_memory_bytes)}`);
  }
  if (evaluation) {
    const how = evaluation.what.includes('ahead of the request')
      ? 'in the worker right after the load, ahead of the request'
      : 'page got Loaded, asked to evaluate';
    lines.push(`${t(evaluation.start_ms)}: evaluation starts (${how})`);
    lines.push(`${t(evaluation.end_ms)}: report built, ${(evaluation.end_ms - evaluation.start_ms).toFixed(0)} ms:`, ...phases(evaluation));
  }
  if (report) lines.push(`${t(report.at_ms)}: report on the page (bincode, postMessage, decode)${report.what.endsWith('(evaluated ahead)') ? ', evaluated ahead' : ''}`);
  lines.push(`${t(marks.row)}: row in the table (render)`);
  return lines;
}


/** When a run read in two places was whole in the worker, which parses the file whole after
 * the row: its `tail` timing (`start_ms`: the parse began, `end_ms`: it ended); `null` for a
 * run read in one place, whole when the row shows. Rejects after `timeout` ms. */
export async function wholeInWorker(page, timeout) {
  const found = await page.waitForFunction(() => {
    const timings = window.ragscopeTimings ?? [];
    const split = timings.some((t) => t.what.startsWith('load ') && t.phases.some(([p]) => p.startsWith('cut at byte')));
    return split ? timings.find((t) => t.what.startsWith('tail ')) : 'read in one place';
  }, null, { timeout });
  const tail = await found.jsonValue();
  return typeof tail === 'string' ? null : tail;
}

/** Seconds from the input's change event to the run's row in the table, on the page's clock. */
export async function pageSeconds(page) {
  const m = await page.evaluate(() => window.perfMarks);
  return (m.row - m.change) / 1000;
}

/** The perf flow (perf.test.mjs, ab-builds.mjs): in a fresh page of the app at `origin`, the
 * qrels loaded, `justBefore()` run, then the run (the benchmark's `bench.run`) picked. The page's
 * timings, the numbers shown, and the page (open). */
export async function loadInFreshPage(browser, origin, qrels, run, justBefore = () => {}) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await observeLongTasks(page);
  await page.goto(`${origin}/?demo=0&measures=nDCG@10,MAP,MRR,P@10,R@100`);
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.waitForTimeout(300);
  const consoleLines = [];
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e}`));
  await page.setInputFiles('#file-input', qrels);
  // 3 of ~40 runs on the loaded machine never showed the qrels as loaded (before and after the
  // worker read files as streams; not reproduced in 55 runs of this step alone): say what the
  // page showed.
  await page.waitForSelector('.file[data-kind="qrels"]', { timeout: 120_000 }).catch(async (e) => {
    const shown = await whatThePageShows(page);
    console.error('the qrels never showed as loaded; the page showed:', JSON.stringify(shown, null, 1));
    console.error('console:', consoleLines.join('\n'));
    throw e;
  });
  await page.waitForFunction(() => !document.querySelector('#eval-progress'));
  await page.waitForTimeout(200);
  justBefore();
  const since = await page.evaluate(() => performance.now());
  await watchLoad(page);
  const t0 = Date.now();
  await page.setInputFiles('#file-input', run);
  await page.waitForSelector('#results tbody tr[data-run="bench.run"]', { timeout: 300_000 });
  const browserSeconds = (Date.now() - t0) / 1000;
  const long = await longTasks(page, since);
  const breakdown = await timeBreakdown(page, t0);
  const inPage = await pageSeconds(page);
  const shown = await page.$$eval('#results tr[data-run="bench.run"] td[data-trec]', (tds) =>
    Object.fromEntries(tds.filter((td) => td.dataset.trec).map((td) => [td.dataset.trec, td.querySelector('.v').textContent.trim()])));
  // A run read in two places is whole in the worker once it has parsed the helper's part
  // itself, after the row: when that was (absent when the run was read in one place).
  const tail = await wholeInWorker(page, 10_000).catch(() => null);
  const change = await page.evaluate(() => window.perfMarks.change);
  const tailLine = tail
    ? `${(tail.end_ms - change).toFixed(0)}: the whole run in the worker (after the row, it parsed the run whole in ${(tail.end_ms - tail.start_ms).toFixed(0)} ms)`
    : '(read in one place: no tail to parse)';
  return { page, inPage, browserSeconds, long, breakdown: [...breakdown, tailLine], shown };
}
