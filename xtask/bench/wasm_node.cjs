// The wasm build of ragscope's engine under Node, end to end (reading both files, parsing,
// evaluating the five benchmark measures), as one process like the native CLI.
const fs = require('node:fs');
const { evaluate } = require('./ragscope_js.js');
const [qrelsPath, runPath] = process.argv.slice(2);
const qrels = fs.readFileSync(qrelsPath);
const run = fs.readFileSync(runPath);
const scores = evaluate(qrels, { bench: run }, ['nDCG@10', 'MAP', 'MRR', 'P@10', 'R@100']);
console.log(JSON.stringify(scores[0].means));
