// The lost-in-the-middle page (#/learn/lost-in-the-middle) with a remote LLM through the Judges
// layer, end to end against crates/judge's fake provider on 127.0.0.1 (an OpenAI-compatible
// server). Its free-text reader answers from the FIRST passage only (crates/judge-fake/src/lib.rs):
// `FAKE{answer=X}` in each gold passage, `FAKE{d}` in every distractor, so a context is answered
// correctly exactly when its gold passage is at position 1, and NO-RESPONSE otherwise; the third
// question's gold also carries `400`, so each of its calls fails (400 is not retried).
//
// p(NO-RESPONSE) comes from the same server through the utility task (chat `top_logprobs`): the
// fake model lists "NO" at X when the prompt holds `lp=X` (its first one), so p of a passage
// alone is e^X of that passage's `lp`, and p of a whole context e^X of the passage placed first;
// without any `lp` it lists no NO-RESPONSE token and p is only an upper bound.
//
// 3 questions × 3 positions (k = 3). Checked: nothing is sent before Start (the estimate counts
// 9 answers + 9 passages alone + 9 whole contexts); the accuracy per position is what the rule
// implies (1, 0, 0 over the 2 answered questions) with 1 failed call per position shown and not
// counted, and r3's 4 failed utility calls (its gold alone, its 3 contexts) shown; p(NO-RESPONSE)
// of each context is e^lp of its first passage; UDCG per position equals `ragscope udcg` and
// nDCG, MAP, MRR and P equal `ragscope eval` on the same contexts (qrels, utilities p = e^lp and
// one run per position written here, from the data, independently of the page); only the app's
// and the fake provider's origins are contacted; a reload restores the 6 answered contexts from
// IndexedDB with no new request, and the estimate then counts only what failed. A UDCG reference
// JSON (no directives): every p only a bound, "≤ x" and `<=x`, UDCG "–" with the count.
// Screenshots at desktop and phone widths (target/e2e-artifacts/litm-remote-*.png).
// With Gemini as the remote model (the fake speaks its wire format too, and lists "NO" at lp
// among `logprobsResult.topCandidates` when asked with `responseLogprobs`): the same p = e^lp
// and UDCG equal to `ragscope udcg`; Anthropic still says why it gives none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { startServer, launch, screenshot, artifacts, shared, skip, startFakeProvider } from './harness.mjs';

const CLI = resolve(process.env.RAGSCOPE_CLI ?? '../../target/debug/ragscope');
const K = 3;
const POSITIONS = [1, 2, 3];

/** Gold first (gold_index 0), then 3 distractors; the fake's directives in the passages, `lp` the
 * log-probability of NO-RESPONSE the fake serves for the gold and the first two distractors. */
const QUESTIONS = [
  ['r1', 'who wrote hamlet', 'William Shakespeare', 'Hamlet is a tragedy written by William Shakespeare.', '', [-0.5, -1.25, -2.5]],
  ['r2', 'what is the capital of france', 'Paris', 'Paris is the capital and largest city of France.', '', [-0.75, -1.5, -3]],
  ['r3', 'what is the largest planet', 'Jupiter', 'Jupiter is the largest planet in the Solar System.', ',400', [-0.25, -2, -1]],
].map(([qid, question, answer, gold, fault, lp]) => ({
  qid, question, answers: [answer], gold_index: 0, lp: [...lp, null],
  passages: [
    `${gold} FAKE{answer=${answer}${fault},lp=${lp[0]}}`,
    `A passage about rivers and their deltas. FAKE{d,lp=${lp[1]}}`,
    `A passage about the history of printing. FAKE{d,lp=${lp[2]}}`,
    `A passage about mountain weather. FAKE{d}`,
  ],
}));

let server, origin, browser, fake, fakeOrigin, dataFile;

async function fakeCount() {
  return (await (await fetch(`${fakeOrigin}/__fake/requests`)).json()).count;
}

before(async () => {
  ({ server, origin } = await startServer());
  ({ child: fake, origin: fakeOrigin } = await startFakeProvider());
  browser = await launch();
  await mkdir(artifacts, { recursive: true });
  dataFile = join(artifacts, 'litm-remote.json');
  await writeFile(dataFile, JSON.stringify({ source: 'e2e', questions: QUESTIONS.map(({ lp, ...q }) => q) }));
});
after(async () => {
  await browser?.close();
  server?.close();
  fake?.kill();
});

/** RFC 4180 CSV as rows of objects. */
function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; } else field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}

async function download(page, button) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return readFile(await d.path(), 'utf8');
}

/** Data, k, the remote model's settings (the Judges page's provider fields, shared). */
async function setUp(page) {
  await page.goto(`${origin}/?demo=0#/learn/lost-in-the-middle`);
  await page.waitForSelector('#litm-data-note');
  await page.setInputFiles('#litm-data-file', dataFile);
  await page.waitForFunction(() => /Your data — litm-remote\.json: 3 questions/.test(
    document.querySelector('#litm-data-note')?.textContent ?? ''));
  await page.fill('#litm-k', String(K));
  await page.dispatchEvent('#litm-k', 'change');
  await page.check('#litm-source-remote');
  await page.waitForSelector('#litm-remote-model');
  assert.equal(await page.$eval('#litm-remote-provider', (s) => s.value), 'openai-compatible');
  await page.fill('#litm-remote-model', 'fake-llm');
  await page.fill('#litm-remote-base-url', `${fakeOrigin}/v1`);
  const checked = await page.$$eval('.litm-positions input:checked', (els) => els.map((e) => Number(e.id.replace('litm-pos-', ''))));
  assert.deepEqual(checked, POSITIONS);
}

async function estimate(page) {
  await page.click('#litm-remote-estimate');
  await page.waitForSelector('#litm-remote-preview');
  return page.$eval('#litm-remote-preview', (e) => ({ requests: Number(e.dataset.requests), cached: Number(e.dataset.cached), text: e.textContent }));
}

/** The paper's procedure: the first k − 1 distractors in order, the gold inserted at `position`. */
function contextOf(q, position, k = K) {
  const ctx = q.passages.map((_, j) => j).filter((j) => j !== q.gold_index).slice(0, k - 1);
  ctx.splice(position - 1, 0, q.gold_index);
  return ctx;
}

/** `ragscope eval` (and, for questions with `lp`, `ragscope udcg` on p = e^lp) per position on the
 * answered questions' contexts, built here from the data. */
function cliMetrics(answered, questions = QUESTIONS, positions = POSITIONS, k = K, label = 'cli') {
  const K = k, POSITIONS = positions;
  const dir = join(artifacts, `litm-remote-${label}`);
  execFileSync('mkdir', ['-p', dir]);
  const file = (name, text) => { const p = join(dir, name); execFileSync('sh', ['-c', `cat > '${p}'`], { input: text }); return p; };
  const qs = questions.filter((q) => answered.has(q.qid));
  const qrels = file('qrels.txt', qs.map((q) => q.passages.map((_, j) => `${q.qid} 0 ${q.qid}/p${j} ${j === q.gold_index ? 1 : 0}`).join('\n')).join('\n') + '\n');
  const withLp = qs.every((q) => q.lp);
  const utilities = withLp ? file('utilities.tsv', qs.map((q) => contextOf(q, 1, K)
    .map((j) => `${q.qid}\t${q.qid}/p${j}\t${j === q.gold_index ? 1 : 0}\t${Math.exp(q.lp[j])}\te2e`).join('\n')).join('\n') + '\n') : null;
  const out = new Map();
  for (const position of POSITIONS) {
    let run = '';
    for (const q of qs) contextOf(q, position, K).forEach((j, i) => { run += `${q.qid} Q0 ${q.qid}/p${j} ${i + 1} ${K - i} litm\n`; });
    const runFile = file(`run-${position}.txt`, run);
    const summary = JSON.parse(execFileSync(CLI, ['eval', '--qrels', qrels, '--measures', `nDCG,MAP,MRR,P@${K}`, '--format', 'json', runFile], { encoding: 'utf8' })).runs[0].summary;
    if (utilities) {
      summary.UDCG = JSON.parse(execFileSync(CLI, ['udcg', '--qrels', qrels, '--utilities', utilities, '--k', String(K), '--format', 'json', runFile], { encoding: 'utf8' })).runs[0].summary[`UDCG@${K}`];
    }
    out.set(position, summary);
  }
  return out;
}

test('a remote LLM answers the contexts: accuracy by the rule, failures shown, metrics equal the CLI, a reload resumes', async (t) => {
  // bypassCSP: for axe-core's script only (the page's CSP still governs the worker's fetches).
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  await setUp(page);

  // Nothing leaves the page before Start; the estimate is made without the network.
  assert.equal(await page.$eval('#litm-run', (b) => b.disabled), true, 'Start needs the estimate first');
  const e = await estimate(page);
  // 9 answers, then p(NO-RESPONSE) of 3 × 3 passages alone and of the 9 whole contexts.
  assert.equal(e.requests, 27, e.text);
  assert.equal(e.cached, 0);
  assert.match(e.text, new RegExp(`27 requests for 9 contexts \\(of them 18 for p\\(NO-RESPONSE\\)\\) to ${fakeOrigin}/v1/chat/completions`));
  assert.match(await page.$eval('#litm-remote-scoring', (x) => x.textContent), /top 20 logprobs.*upper bound/);
  assert.match(await page.$eval('#litm-remote-first-prompt', (p) => p.textContent), /Document: Hamlet is a tragedy/);
  assert.equal(await fakeCount(), 0, 'no request before Start');
  assert.match(await page.$eval('#litm-run', (b) => b.textContent), /Start: send up to 27 requests to 127\.0\.0\.1:\d+/);

  // The answers survive a reload only where the user lets the browser keep them (#41).
  await page.check('#litm-keep');
  await page.click('#litm-run');
  await page.waitForFunction(() => /Done in/.test(document.querySelector('#litm-message')?.textContent ?? '')
    || document.querySelector('#litm-error'), null, { timeout: 120_000 });
  assert.equal(await page.$('#litm-error'), null, await page.$eval('#litm-error', (x) => x.textContent).catch(() => ''));
  assert.equal(await fakeCount(), 27, 'one request per call (400 is not retried)');
  assert.equal(await page.$eval('#litm-failed', (x) => x.dataset.failed), '3');
  assert.match(await page.$eval('#litm-failed', (x) => x.textContent), /r3 at position 1: .*400/);
  // r3's gold alone and its 3 contexts: shown, never a number.
  assert.equal(await page.$eval('#litm-utility-failed', (x) => x.dataset.failed), '4');
  assert.match(await page.$eval('#litm-utility-failed', (x) => x.textContent), /r3, passage 0 alone: .*400/);
  assert.match(await page.$eval('#litm-spent', (x) => x.textContent), /^27 requests sent/);

  const summary = parseCsv(await download(page, '#litm-export-csv'));
  const items = parseCsv(await download(page, '#litm-export-items'));
  assert.equal(items.length, 6, 'the failed contexts are not items');
  for (const i of items) {
    const q = QUESTIONS.find((x) => x.qid === i.qid);
    assert.equal(i.correct, String(i.position === '1'), `${i.qid} at ${i.position}: ${i.answer}`);
    assert.equal(i.answer, i.position === '1' ? q.answers[0] : 'NO-RESPONSE');
    // p(NO-RESPONSE) of the whole context: e^lp of the passage placed first.
    const want = Math.exp(q.lp[contextOf(q, Number(i.position))[0]]);
    assert.ok(Math.abs(Number(i.p_no_response) - want) <= 1e-12, `p of ${i.qid} at ${i.position}: ${i.p_no_response} vs ${want}`);
    assert.notEqual(i.udcg, '');
    assert.equal(i.udcg_missing, '');
  }
  const expected = { 1: 1, 2: 0, 3: 0 };
  const want = existsSync(CLI) ? cliMetrics(new Set(items.map((i) => i.qid))) : null;
  if (!want) skip(t, `the CLI comparison (no ${CLI}; build it with cargo build -p ragscope-cli)`);
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-12, `${what}: page ${a}, CLI ${b}`);
  for (const row of summary) {
    const p = Number(row.position);
    assert.equal(row.model, `openai-compatible/fake-llm at ${fakeOrigin}/v1`);
    assert.equal(Number(row.questions), 2, 'answered questions');
    assert.equal(Number(row.failed), 1);
    assert.equal(Number(row.accuracy), expected[p], `accuracy at ${p}`);
    const ps = QUESTIONS.slice(0, 2).map((q) => Math.exp(q.lp[contextOf(q, p)[0]]));
    close(Number(row.p_no_response), (ps[0] + ps[1]) / 2, `p(NO-RESPONSE) at ${p}`);
    assert.equal(row.udcg_missing, '0');
    if (want) {
      const m = want.get(p);
      close(Number(row.udcg), m.UDCG, `UDCG at ${p}`);
      close(Number(row.ndcg), m.nDCG, `nDCG at ${p}`);
      close(Number(row.map), m.MAP, `MAP at ${p}`);
      close(Number(row.mrr), m.MRR, `MRR at ${p}`);
      close(Number(row.precision), m[`P@${K}`], `P at ${p}`);
    }
  }
  assert.deepEqual(await page.$$eval('#litm-table tbody tr td:nth-child(2)', (c) => c.map((x) => x.textContent)),
    ['2 (1 failed)', '2 (1 failed)', '2 (1 failed)']);
  // The table shows the same numbers (3 decimals), no bound mark.
  const cells = (n) => page.$$eval(`#litm-table tbody tr td:nth-child(${n})`, (c) => c.map((x) => x.textContent));
  assert.deepEqual(await cells(9), summary.map((r) => Number(r.udcg).toFixed(3)));
  assert.deepEqual(await cells(4), summary.map((r) => Number(r.p_no_response).toFixed(3)));
  assert.equal(await page.$('#litm-udcg-missing'), null);
  await screenshot(page, 'litm-remote-desktop');
  await page.locator('.litm-results').screenshot({ path: join(artifacts, 'litm-remote-results.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'litm-remote-phone');
  // The setup column alone (the full page is too tall to look at on a phone).
  await page.locator('.litm-setup').screenshot({ path: join(artifacts, 'litm-remote-phone-setup.png') });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways on a phone by ${overflow}px`);
  await page.setViewportSize({ width: 1280, height: 900 });

  // axe-core on the page with the remote settings, the estimate and the failures shown.
  const require = createRequire(import.meta.url);
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const axe = await page.evaluate(async () => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  assert.deepEqual(bad, []);

  // A reload resumes: the 6 answered contexts come from IndexedDB, nothing is sent, and the
  // estimate counts only the 3 failed ones.
  await page.reload();
  await setUp(page);
  await page.waitForSelector('#litm-cached', { timeout: 30_000 });
  assert.match(await page.$eval('#litm-cached', (x) => x.textContent), /^6 results restored/);
  // r3's 3 answers, its gold alone and its 3 contexts; its 2 distractors alone are cached.
  const again = await estimate(page);
  assert.equal(again.requests, 7, again.text);
  assert.equal(again.cached, 2, again.text);
  assert.equal(await fakeCount(), 27, 'no request on reload');
  assert.match(await page.$eval('#litm-run', (b) => b.textContent), /Start: send up to 7 requests/);

  // The lost-in-the-middle paper's QA prompt instead: another experiment (9 contexts to send),
  // its first prompt the paper's template with the paper's document lines, still nothing sent.
  // Utilities keep the UDCG paper's prompt: 8 of the 9 passages alone are cached (r3's gold
  // failed), and no p of a whole context under a prompt that does not ask for NO-RESPONSE.
  await page.selectOption('#litm-prompt', 'litm-qa');
  const qa = await estimate(page);
  assert.equal(qa.requests, 10, qa.text);
  assert.equal(qa.cached, 8, qa.text);
  // The preview shows the message with its role; no system message under the paper's prompt.
  const [q0] = QUESTIONS;
  assert.equal(await page.$eval('#litm-remote-first-prompt', (p) => p.textContent),
    '[user]\nWrite a high-quality answer for the given question using only the provided search results (some of which might be irrelevant).\n\n'
    + `Document [1](Title: ) ${q0.passages[0]}\nDocument [2](Title: ) ${q0.passages[1]}\nDocument [3](Title: ) ${q0.passages[2]}\n\n`
    + `Question: ${q0.question}\nAnswer:\n`);
  assert.equal(await fakeCount(), 27, 'an estimate sends nothing');

  // Anthropic: no p(NO-RESPONSE), and the page says why; no whole-context option.
  for (const [provider, why] of [['anthropic', /Anthropic's Messages API returns no log-probabilities/]]) {
    await page.selectOption('#litm-remote-provider', provider);
    await page.fill('#litm-remote-model', 'some-model');
    await page.waitForSelector('#litm-remote-no-p');
    assert.match(await page.$eval('#litm-remote-no-p', (x) => x.textContent), why);
    assert.equal(await page.$('#litm-context-p'), null);
    assert.equal(await page.$('#litm-remote-utility'), null);
  }
  // Gemini: its top 20 through responseLogprobs (run in the next test); no GGUF (no echo).
  await page.selectOption('#litm-remote-provider', 'gemini');
  await page.waitForSelector('#litm-remote-gemini');
  assert.equal(await page.$('#litm-remote-no-p'), null);
  assert.equal(await page.$('#litm-remote-gguf'), null);
  assert.match(await page.$eval('#litm-remote-gemini', (x) => x.textContent), /responseLogprobs/);

  assert.deepEqual(errors.filter((x) => !/400 \(Bad Request\)/.test(x)), []);
  const outside = requests.filter((u) => !u.startsWith(origin) && !u.startsWith(fakeOrigin) && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(outside, []);
  assert.ok(requests.some((u) => u.startsWith(fakeOrigin)), 'the worker\'s requests are seen');
  await context.close();
});

test('Gemini: p(NO-RESPONSE) from its top 20 (responseLogprobs) equals e^lp, UDCG is computed, failures shown', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  const before = await fakeCount();
  await setUp(page);
  await page.selectOption('#litm-remote-provider', 'gemini');
  await page.fill('#litm-remote-model', 'gemini-fake');
  await page.fill('#litm-remote-base-url', fakeOrigin);
  await page.fill('#litm-remote-key', 'test-gemini-key');
  await page.waitForSelector('#litm-remote-gemini');
  assert.equal(await page.$('#litm-remote-no-p'), null);
  assert.equal(await page.$eval('#litm-remote-utility', (x) => x.dataset.exact), 'false');
  // 9 answers, 9 passages alone, 9 whole contexts, all to Gemini's generateContent.
  const e = await estimate(page);
  assert.equal(e.requests, 27, e.text);
  assert.match(e.text, new RegExp(`of them 18 for p\\(NO-RESPONSE\\)\\) to ${fakeOrigin}/v1beta/models/gemini-fake:generateContent`));
  assert.match(await page.$eval('#litm-remote-scoring', (x) => x.textContent), /Gemini's top 20 logprobs.*responseLogprobs.*upper bound/);
  assert.equal(await fakeCount() - before, 0, 'no request before Start');
  await page.click('#litm-run');
  await page.waitForFunction(() => /Done in/.test(document.querySelector('#litm-message')?.textContent ?? '')
    || document.querySelector('#litm-error'), null, { timeout: 120_000 });
  assert.equal(await page.$('#litm-error'), null, await page.$eval('#litm-error', (x) => x.textContent).catch(() => ''));
  assert.equal(await fakeCount() - before, 27);
  const sent = (await (await fetch(`${fakeOrigin}/__fake/requests`)).json()).requests.slice(before);
  assert.ok(sent.every((r) => r.path === '/v1beta/models/gemini-fake:generateContent'), 'Gemini\'s endpoint only');
  assert.equal(sent.filter((r) => JSON.parse(r.body).generationConfig?.responseLogprobs === true).length, 18);
  // r3's answers (400) and its gold alone and 3 contexts: shown, never a number.
  assert.equal(await page.$eval('#litm-failed', (x) => x.dataset.failed), '3');
  assert.equal(await page.$eval('#litm-utility-failed', (x) => x.dataset.failed), '4');
  const items = parseCsv(await download(page, '#litm-export-items'));
  assert.equal(items.length, 6);
  for (const i of items) {
    const q = QUESTIONS.find((x) => x.qid === i.qid);
    assert.equal(i.correct, String(i.position === '1'), `${i.qid} at ${i.position}: ${i.answer}`);
    // The fake lists "NO" at lp among Gemini's topCandidates: p = e^lp of the passage first.
    const want = Math.exp(q.lp[contextOf(q, Number(i.position))[0]]);
    assert.ok(Math.abs(Number(i.p_no_response) - want) <= 1e-12, `p of ${i.qid} at ${i.position}: ${i.p_no_response} vs ${want}`);
    assert.notEqual(i.udcg, '');
    assert.equal(i.udcg_missing, '');
  }
  const summary = parseCsv(await download(page, '#litm-export-csv'));
  const want = existsSync(CLI) ? cliMetrics(new Set(items.map((i) => i.qid)), QUESTIONS, POSITIONS, K, 'cli-gemini') : null;
  if (!want) skip(t, `the CLI comparison (no ${CLI}; build it with cargo build -p ragscope-cli)`);
  for (const row of summary) {
    const p = Number(row.position);
    const ps = QUESTIONS.slice(0, 2).map((q) => Math.exp(q.lp[contextOf(q, p)[0]]));
    assert.ok(Math.abs(Number(row.p_no_response) - (ps[0] + ps[1]) / 2) <= 1e-12, `p(NO-RESPONSE) at ${p}`);
    assert.equal(row.udcg_missing, '0');
    if (want) assert.ok(Math.abs(Number(row.udcg) - want.get(p).UDCG) <= 1e-12, `UDCG at ${p}: page ${row.udcg}, CLI ${want.get(p).UDCG}`);
  }
  assert.deepEqual(errors.filter((x) => !/400 \(Bad Request\)/.test(x)), []);
  const outside = requests.filter((u) => !u.startsWith(origin) && !u.startsWith(fakeOrigin) && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(outside, []);
  await context.close();
});

test('with the served model\'s GGUF picked, p(NO-RESPONSE) is exact: /completions echo after the probe', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  const before = await fakeCount();
  await setUp(page);
  // The tiny oracle model's GGUF: its chat template and tokenizer (metadata read by the worker).
  const gguf = resolve(process.env.RAGSCOPE_INFER_FIXTURES ?? '../../crates/infer/tests/fixtures', 'llama-f32.gguf');
  await page.setInputFiles('#litm-remote-gguf', gguf);
  await page.waitForFunction(() => /Exact scoring \(echo\)/.test(document.querySelector('#litm-remote-gguf-info')?.textContent ?? ''));
  assert.equal(await page.$eval('#litm-remote-utility', (x) => x.dataset.exact), 'true');
  // 9 answers, 9 passages alone, 9 contexts, and the probe's 2 requests.
  const e = await estimate(page);
  assert.equal(e.requests, 29, e.text);
  assert.match(e.text, /of them 20 for p\(NO-RESPONSE\)/);
  assert.match(await page.$eval('#litm-remote-scoring', (x) => x.textContent), /exact: \/completions echo/);
  assert.equal(await fakeCount() - before, 0, 'no request before Start');
  await page.click('#litm-run');
  await page.waitForFunction(() => /Done in/.test(document.querySelector('#litm-message')?.textContent ?? '')
    || document.querySelector('#litm-error'), null, { timeout: 120_000 });
  assert.equal(await page.$('#litm-error'), null, await page.$eval('#litm-error', (x) => x.textContent).catch(() => ''));
  assert.equal(await fakeCount() - before, 29);
  assert.equal(await page.$eval('#litm-utility-failed', (x) => x.dataset.failed), '4');
  const items = parseCsv(await download(page, '#litm-export-items'));
  assert.equal(items.length, 6);
  for (const i of items) {
    const q = QUESTIONS.find((x) => x.qid === i.qid);
    const want = Math.exp(q.lp[contextOf(q, Number(i.position))[0]]);
    assert.ok(Math.abs(Number(i.p_no_response) - want) <= 1e-12, `p of ${i.qid} at ${i.position}: ${i.p_no_response} vs ${want}`);
  }
  const summary = parseCsv(await download(page, '#litm-export-csv'));
  const want = existsSync(CLI) ? cliMetrics(new Set(items.map((i) => i.qid)), QUESTIONS, POSITIONS, K, 'echo-cli') : null;
  if (!want) skip(t, `the CLI comparison (no ${CLI})`);
  for (const row of summary) {
    assert.equal(row.udcg_missing, '0');
    if (want) {
      const m = want.get(Number(row.position));
      assert.ok(Math.abs(Number(row.udcg) - m.UDCG) <= 1e-12, `UDCG at ${row.position}: page ${row.udcg}, CLI ${m.UDCG}`);
    }
  }
  assert.deepEqual(errors.filter((x) => !/400 \(Bad Request\)/.test(x)), []);
  const outside = requests.filter((u) => !u.startsWith(origin) && !u.startsWith(fakeOrigin) && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(outside, []);
  assert.ok(requests.some((u) => u === `${fakeOrigin}/v1/completions`), 'the echo goes to /v1/completions');
  await context.close();
});

test('a UDCG reference JSON as the data: no accuracy ("n/a"), every metric per position equals the CLI', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const udcgFile = join(shared, 'data/udcg/sample_dataset.json');
  const raw = JSON.parse(await readFile(udcgFile, 'utf8'));
  // The page's reading, written here from the file: the first relevant passage is moved through
  // the irrelevant ones (in the file's order); other relevant passages are left out.
  const questions = raw.map((ex) => ({
    qid: ex.example_id,
    gold_index: 0,
    passages: [ex.passages.find((p) => p.is_relevant), ...ex.passages.filter((p) => !p.is_relevant)].map((p) => p.text),
  }));
  const k = Math.min(...questions.map((q) => q.passages.length));
  assert.equal(k, 4);
  const before = await fakeCount();
  await page.goto(`${origin}/?demo=0#/learn/lost-in-the-middle`);
  await page.waitForSelector('#litm-data-note');
  await page.setInputFiles('#litm-data-file', udcgFile);
  await page.waitForFunction(() => /Your data — sample_dataset\.json: 3 questions.*no gold answers/.test(
    document.querySelector('#litm-data-note')?.textContent ?? ''));
  assert.equal(await page.$eval('#litm-k', (e) => e.value), String(k), 'k capped by the shortest example');
  const positions = await page.$$eval('.litm-positions input:checked', (els) => els.map((e) => Number(e.id.replace('litm-pos-', ''))));
  assert.deepEqual(positions, [1, 2, 4]);
  await page.check('#litm-source-remote');
  await page.fill('#litm-remote-model', 'fake-llm');
  await page.fill('#litm-remote-base-url', `${fakeOrigin}/v1`);
  // 9 answers, 3 × 4 passages alone, 9 whole contexts.
  const e = await estimate(page);
  assert.equal(e.requests, 30, e.text);
  await page.click('#litm-run');
  await page.waitForFunction(() => /Done in/.test(document.querySelector('#litm-message')?.textContent ?? '')
    || document.querySelector('#litm-error'), null, { timeout: 120_000 });
  assert.equal(await page.$('#litm-error'), null);
  assert.equal(await fakeCount() - before, 30);
  assert.deepEqual(await page.$$eval('#litm-table tbody tr td:nth-child(3)', (c) => c.map((x) => x.textContent)),
    ['n/a (no gold answers)', 'n/a (no gold answers)', 'n/a (no gold answers)']);
  const summary = parseCsv(await download(page, '#litm-export-csv'));
  const want = existsSync(CLI) ? cliMetrics(new Set(questions.map((q) => q.qid)), questions, positions, k, 'udcg-cli') : null;
  if (!want) skip(t, `the CLI comparison (no ${CLI})`);
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-12, `${what}: page ${a}, CLI ${b}`);
  // No `lp` anywhere: the fake lists "Sure" at −0.1 and alt1..alt19 at −(4 + 0.25·k), no
  // NO-RESPONSE token, so p is at most min(1 − Σ listed, the 20th's) — a bound, never a value.
  const listed = Math.exp(-0.1) + Array.from({ length: 19 }, (_, i) => Math.exp(-(4 + 0.25 * (i + 1)))).reduce((a, b) => a + b, 0);
  const bound = Math.min(1 - listed, Math.exp(-(4 + 0.25 * 19)));
  for (const row of summary) {
    const p = Number(row.position);
    assert.equal(Number(row.questions), 3);
    assert.equal(row.accuracy, '');
    assert.match(row.p_no_response, /^<=/);
    assert.ok(Math.abs(Number(row.p_no_response.slice(2)) - bound) <= 1e-15, `bound at ${p}: ${row.p_no_response} vs ${bound}`);
    assert.equal(row.udcg, '');
    assert.equal(row.udcg_missing, '3');
    if (want) {
      const m = want.get(p);
      close(Number(row.ndcg), m.nDCG, `nDCG at ${p}`);
      close(Number(row.map), m.MAP, `MAP at ${p}`);
      close(Number(row.mrr), m.MRR, `MRR at ${p}`);
      close(Number(row.precision), m[`P@${k}`], `P at ${p}`);
    }
  }
  assert.deepEqual(await page.$$eval('#litm-table tbody tr td:nth-child(4)', (c) => c.map((x) => x.textContent)),
    Array(3).fill(`≤ ${bound.toExponential(2)}`), 'below 0.001: three significant digits');
  assert.deepEqual(await page.$$eval('#litm-table tbody tr td:nth-child(9)', (c) => c.map((x) => x.textContent)), ['–', '–', '–']);
  assert.equal(await page.$eval('#litm-udcg-missing', (x) => x.dataset.missing), '9');
  assert.match(await page.$eval('#litm-udcg-missing', (x) => x.textContent), /9 × 4 of its 4 passages' p\(NO-RESPONSE\) are only upper bounds/);
  await screenshot(page, 'litm-udcg-json');
  await page.locator('.litm-results').screenshot({ path: join(artifacts, 'litm-udcg-json-results.png') });
  assert.deepEqual(errors, []);
  await context.close();
});
