// The perf test's flow (perf.test.mjs: the 38 MB benchmark run into a page that holds the qrels,
// change event -> row in the table) on several builds of the app, alternating, with the worker's
// phases: `node tests/browser/ab-builds.mjs ROUNDS DIST_A DIST_B ...` (each DIST a copy of a
// `trunk build --release` dist/; the files of `cargo xtask bench metrics` in BENCH_DIR, default
// target/bench/metrics). Prints medians. A benchmark for choosing between builds, not a test.
// Extra Chromium flags for an experiment go in RAGSCOPE_CHROMIUM_ARGS (harness.mjs), e.g.
// `--js-flags=--no-liftoff` to compare with V8's baseline tier left out.
import { join, resolve } from 'node:path';
import { launch, startServer } from './harness.mjs';
import { loadInFreshPage } from './perf-marks.mjs';
const [rounds, ...dists] = process.argv.slice(2);
const benchDir = process.env.BENCH_DIR ?? new URL('../../target/bench/metrics', import.meta.url).pathname;
const qrels = join(benchDir, 'bench.qrels'), run = join(benchDir, 'bench.run');
const servers = await Promise.all(dists.map((d) => startServer('/', resolve(d))));
const browser = await launch();
const res = dists.map(() => []);
const phaseSums = dists.map(() => ({}));
for (let r = 0; r < +rounds; r++) {
  for (let i = 0; i < dists.length; i++) {
    const { page, inPage: s, breakdown: lines } = await loadInFreshPage(browser, servers[i].origin, qrels, run);
    res[i].push(s);
    for (const l of lines) {
      const phase = l.match(/^\s+([^:]+): (\d+) ms$/);
      if (phase) (phaseSums[i][phase[1]] ??= []).push(+phase[2]);
      const mark = l.match(/^(-?\d+): ([^,(]+)/);
      if (mark) (phaseSums[i][`at ${mark[2].trim()}`] ??= []).push(+mark[1]);
    }
    await page.close();
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (let i = 0; i < dists.length; i++) {
  console.log(`${dists[i]}: median ${med(res[i]).toFixed(3)} s  [${res[i].map((x) => x.toFixed(3)).join(' ')}]`);
  for (const [k, v] of Object.entries(phaseSums[i])) console.log(`    ${k}: ${med(v)} ms`);
}
await browser.close();
servers.forEach((s) => s.server.close());
