// Uses the JS package exactly as a web page would: init() loads the wasm, then plain calls.
import init, { evaluate, trecEval, udcg } from './pkg/ragscope_js.js';

await init();
const $ = (id) => document.getElementById(id);
const button = $('evaluate');
button.disabled = false;

// UDCG of one context from its passages' utilities u = R·(1 − p(NO-RESPONSE)).
$('udcg').textContent = `udcg([0.9, -0.8, 0.5], 3) = ${udcg([0.9, -0.8, 0.5], 3).toFixed(6)}`;

button.addEventListener('click', async () => {
  const [qrels, run] = [$('qrels').files[0], $('run').files[0]];
  if (!qrels || !run) { $('scores').textContent = 'Pick a qrels file and a run first.'; return; }
  const [qrelsText, runText] = await Promise.all([qrels.text(), run.text()]);
  const measures = $('measures').value.split(',').map((m) => m.trim()).filter(Boolean);
  try {
    const scores = evaluate(qrelsText, { [run.name]: runText }, measures, true);
    $('scores').textContent = JSON.stringify(scores, null, 2);
    $('trec').textContent = trecEval([], qrelsText, runText);
  } catch (e) {
    $('scores').textContent = `error: ${e.message ?? e}`;
  }
  document.body.dataset.done = 'yes';
});
