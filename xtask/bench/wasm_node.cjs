// The wasm build of ragscope's engine under Node, end to end (reading both files, parsing,
// evaluating the five benchmark measures), as one process like the native CLI. Prints the
// means and, separately, the seconds spent inside evaluate() (copy into wasm, parse, score):
// wall and CPU (process.cpuUsage: this thread and V8's background compiler threads) of the first
// call, which runs partly in V8's baseline tier (Liftoff) while the optimised code compiles, and
// of a second call on the same input, which runs optimised code only.
const fs = require('node:fs');
const { evaluate } = require('./ragscope_js.js');
const [qrelsPath, runPath] = process.argv.slice(2);
const qrels = fs.readFileSync(qrelsPath);
const run = fs.readFileSync(runPath);
const measures = ['nDCG@10', 'MAP', 'MRR', 'P@10', 'R@100'];
function timed() {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const scores = evaluate(qrels, { bench: run }, measures);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  return { scores, seconds, cpu: (c.user + c.system) / 1e6 };
}
const first = timed();
const second = timed();
console.log(JSON.stringify({
  means: first.scores[0].means,
  evaluate_s: first.seconds,
  evaluate_cpu_s: first.cpu,
  evaluate_warm_s: second.seconds,
  evaluate_warm_cpu_s: second.cpu,
}));
