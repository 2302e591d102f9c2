// Where the browser's time goes while a file loads and is evaluated: the page's marks (input
// change, row shown) and the worker's timings (window.ragscopeTimings, src/ui/perf_marks.rs).

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
    lines.push(`${t(evaluation.start_ms)}: evaluation starts (page got Loaded, asked to evaluate)`);
    lines.push(`${t(evaluation.end_ms)}: report built, ${(evaluation.end_ms - evaluation.start_ms).toFixed(0)} ms:`, ...phases(evaluation));
  }
  if (report) lines.push(`${t(report.at_ms)}: report on the page (bincode, postMessage, decode)`);
  lines.push(`${t(marks.row)}: row in the table (render)`);
  return lines;
}


/** Seconds from the input's change event to the run's row in the table, on the page's clock. */
export async function pageSeconds(page) {
  const m = await page.evaluate(() => window.perfMarks);
  return (m.row - m.change) / 1000;
}
