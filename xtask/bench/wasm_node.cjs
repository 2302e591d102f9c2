// The wasm build of ragscope's engine under Node, end to end (reading both files, parsing,
// evaluating the five benchmark measures), as one process like the native CLI. Prints the
// means and, separately, the seconds spent inside evaluate() (copy into wasm, parse, score).
const fs = require('node:fs');
const { evaluate } = require('./ragscope_js.js');
const [qrelsPath, runPath] = process.argv.slice(2);
const qrels = fs.readFileSync(qrelsPath);
const run = fs.readFileSync(runPath);
const t0 = process.hrtime.bigint();
const scores = evaluate(qrels, { bench: run }, ['nDCG@10', 'MAP', 'MRR', 'P@10', 'R@100']);
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ means: scores[0].means, evaluate_s: seconds }));
