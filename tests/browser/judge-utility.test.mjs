// The Judges panel's utility task (`ragscope judge utility` in the app) end to end, against
// crates/judge's fake OpenAI-compatible server on 127.0.0.1 (its fake model serves documented
// logprobs; `FAKE{lp=X}` in a passage forces the appended token's):
//  - a run's top 2 (topics, passages, qrels) with the chat template and tokenizer of a GGUF picked
//    in the page (read in the worker, never uploaded): the estimate counts the 2 probe requests,
//    the utilities equal `ragscope judge utility --gguf` against the same server within 1e-12,
//    and are loaded at once into the RAG view;
//  - a UDCG JSON without a template (chat top_logprobs): the downloaded JSON equals the CLI's,
//    bounds written as bounds and said so;
//  - a misaligned server (the fake's `shifted` scenario) refused with the CLI's message after
//    its 2 probe requests;
//  - Gemini (the fake speaks its wire format; `responseLogprobs` gets the same top 20): no
//    template offered, the downloaded JSON equals `ragscope judge utility --provider gemini`'s.
// Requests go only to the app's origin and the fake servers (none before Start); no CSP
// violation, no page error. Screenshots at desktop and phone widths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, launch, screenshot, recordCspViolations, startFakeProvider } from './harness.mjs';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
const fixtures = resolve('fixtures/judge-utility');
const fx = (f) => join(fixtures, f);
const MODEL = join(resolve(process.env.RAGSCOPE_INFER_FIXTURES ?? '../../crates/infer/tests/fixtures'), 'llama-f32.gguf');
const TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
  + '{% if add_generation_prompt %}<|assistant|>\n{% endif %}';

let server, origin, browser, fake, fakeOrigin, shifted, shiftedOrigin, cli, tmp;

async function fakeCount(at) {
  const r = await fetch(`${at}/__fake/requests`);
  return (await r.json()).count;
}

before(async () => {
  cli = process.env.RAGSCOPE_CLI ?? join(root, 'target/debug/ragscope');
  if (!existsSync(cli)) execFileSync('cargo', ['build', '-p', 'ragscope-cli'], { cwd: root, stdio: 'inherit' });
  tmp = await mkdtemp(join(tmpdir(), 'ragscope-judge-utility-'));
  ({ server, origin } = await startServer());
  ({ child: fake, origin: fakeOrigin } = await startFakeProvider('markers'));
  ({ child: shifted, origin: shiftedOrigin } = await startFakeProvider('shifted'));
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
  fake?.kill();
  shifted?.kill();
});

async function openJudges(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  const csp = recordCspViolations(page);
  await page.goto(`${origin}/?demo=0`);
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.click('#nav-judges');
  await page.waitForSelector('#judge-model');
  return { context, page, errors, requests, csp };
}

async function fillProvider(page, at) {
  await page.selectOption('#judge-task', 'utility');
  await page.waitForSelector('#judge-task-inputs[data-task="utility"]');
  assert.equal(await page.$eval('#judge-provider', (s) => s.value), 'openai-compatible');
  await page.fill('#judge-model', 'fake-judge');
  await page.fill('#judge-base-url', `${at}/v1`);
}

async function download(page, name) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#judge-download')]);
  assert.equal(d.suggestedFilename(), name);
  const path = join(tmp, `page-${name}`);
  await copyFile(await d.path(), path);
  return readFile(path, 'utf8');
}

function onlyOurOrigins(requests) {
  return requests.filter((u) => !u.startsWith(origin) && !u.startsWith(fakeOrigin) && !u.startsWith(shiftedOrigin)
    && !u.startsWith('blob:') && !u.startsWith('data:'));
}

function judgeUtilityCli(args) {
  return execFileSync(cli, ['judge', 'utility', '--provider', 'openai-compatible', '--base-url', `${fakeOrigin}/v1`,
    '--model', 'fake-judge', '--no-cache', '--quiet', '--log', join(tmp, 'log.jsonl'), ...args],
  { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `qid docno relevant no_res_prob` rows of a utilities TSV, by `qid/docno`. */
function tsvRows(text) {
  const rows = new Map();
  for (const line of text.trim().split('\n').slice(1)) {
    const [qid, docno, relevant, p] = line.split('\t');
    rows.set(`${qid}/${docno}`, { relevant, p });
  }
  return rows;
}

test('a run\'s top k with a GGUF\'s template: exact utilities equal the CLI\'s, loaded into the RAG view', async () => {
  const { context, page, errors, requests, csp } = await openJudges();
  await page.setInputFiles('#file-input', [fx('topics.tsv'), fx('passages.jsonl'), fx('qrels.txt'), fx('run.txt')]);
  for (const kind of ['topics', 'passages', 'qrels', 'run']) {
    await page.waitForSelector(`.file[data-kind="${kind}"]`, { timeout: 30_000 });
  }
  await fillProvider(page, fakeOrigin);
  assert.equal(await page.$eval('#judge-utility-source', (s) => s.value.split(':')[0]), 'run');
  await page.fill('#judge-k', '2');
  await page.selectOption('#judge-template', 'gguf');
  await page.setInputFiles('#judge-gguf', MODEL);
  await page.waitForSelector('#judge-gguf-status[data-state="read"]', { timeout: 30_000 });
  assert.match(await page.textContent('#judge-gguf-status'), /llama-f32\.gguf .*chat template of \d+ characters/);

  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  // 2 queries × top 2, and the 2 probe requests.
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '6');
  const summary = await page.textContent('#judge-estimate-summary');
  assert.match(summary, /4 passages to .*\/v1\/completions/);
  assert.match(summary, /probe/);
  const prompt = await page.textContent('#judge-first-prompt');
  assert.match(prompt, /Question: Who wrote Hamlet\?/);
  const before = await fakeCount(fakeOrigin);
  assert.deepEqual(requests.filter((u) => u.startsWith(fakeOrigin)), [], 'nothing sent before Start');

  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 60_000 });
  const job = await page.$eval('#judge-job', (e) => ({ ...e.dataset }));
  assert.deepEqual([job.phase, job.done, job.total, job.failed], ['done', '4', '4', '0']);
  assert.equal(await fakeCount(fakeOrigin), before + 6);
  await screenshot(page, 'desktop-judge-utility');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'phone-judge-utility');
  await page.setViewportSize({ width: 1280, height: 900 });

  const pageTsv = await download(page, 'utilities-fake-judge.tsv');
  const cliOut = join(tmp, 'cli-utilities.tsv');
  judgeUtilityCli(['--gguf', MODEL, '--topics', fx('topics.tsv'), '--passages', fx('passages.jsonl'),
    '--qrels', fx('qrels.txt'), '--run', fx('run.txt'), '--k', '2', '-o', cliOut]);
  const got = tsvRows(pageTsv);
  const want = tsvRows(await readFile(cliOut, 'utf8'));
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort());
  assert.equal(got.size, 4);
  for (const [key, w] of want) {
    const g = got.get(key);
    assert.equal(g.relevant, w.relevant, key);
    assert.ok(!w.p.startsWith('<='), `${key}: the CLI's value is exact`);
    assert.ok(Math.abs(Number(g.p) - Number(w.p)) <= 1e-12, `${key}: page ${g.p} vs CLI ${w.p}`);
  }
  // The forced passages: the fake's documented values.
  assert.equal(Number(got.get('q1/d1').p), Math.exp(-2.5));
  assert.equal(Number(got.get('q2/d5').p), Math.exp(-0.75));

  // Loaded at once as the utilities file: the RAG view plots UDCG against nDCG for the run.
  await page.waitForSelector('.file[data-kind="utilities"][data-file="utilities-llama-f32-run-top2.tsv"]', { timeout: 30_000 });
  await page.click('#judge-result-view');
  await page.waitForSelector('#chart-udcg-0 circle', { timeout: 30_000 });
  assert.equal(await page.$$eval('#chart-udcg-0 circle', (c) => c.length), 2);
  assert.match(await page.textContent('.rag'), /UDCG@10 vs nDCG@10 per query — run\.txt/);
  await screenshot(page, 'desktop-judge-utility-rag');

  assert.deepEqual(onlyOurOrigins(requests), []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a UDCG JSON without a template: bounds written as bounds, the JSON equals the CLI\'s', async () => {
  const { context, page, errors, requests, csp } = await openJudges();
  await page.setInputFiles('#file-input', fx('udcg.json'));
  await page.waitForSelector('.file[data-kind="udcg-json"]', { timeout: 30_000 });
  await fillProvider(page, fakeOrigin);
  assert.equal(await page.$eval('#judge-template', (s) => s.value), 'none');
  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '3', 'no probe on the chat path');
  assert.match(await page.textContent('#judge-estimate-summary'), /\/v1\/chat\/completions/);
  const before = await fakeCount(fakeOrigin);
  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 60_000 });
  assert.equal(await fakeCount(fakeOrigin), before + 3);
  assert.match(await page.textContent('#judge-result-note'),
    /1 of 3 probabilities are only upper bounds .* written as no_res_prob_upper_bound; pick the model's GGUF or a template file for exact values\. 1 passages are not in the RAG views/);
  const pageJson = JSON.parse(await download(page, 'utilities-fake-judge.json'));
  const cliOut = join(tmp, 'cli-utilities.json');
  judgeUtilityCli([fx('udcg.json'), '-o', cliOut]);
  const cliJson = JSON.parse(await readFile(cliOut, 'utf8'));
  assert.deepEqual(pageJson, cliJson);
  const info = (e, p) => pageJson[e].passages[p].models_info['fake-judge'];
  assert.equal(info(0, 0).no_res_prob, Math.exp(-3.0));
  assert.equal(info(0, 1).no_res_prob, undefined, 'a bound is never a value');
  assert.ok(info(0, 1).no_res_prob_upper_bound > 0);
  // The exact values (2 of 3) are loaded as utilities.
  await page.waitForSelector('.file[data-kind="utilities"][data-file="utilities-fake-judge-udcg.tsv"]', { timeout: 30_000 });
  assert.deepEqual(onlyOurOrigins(requests), []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Gemini: its top 20 (responseLogprobs) fill the UDCG JSON as the CLI does, no template offered', async () => {
  const { context, page, errors, requests, csp } = await openJudges();
  await page.setInputFiles('#file-input', fx('udcg.json'));
  await page.waitForSelector('.file[data-kind="udcg-json"]', { timeout: 30_000 });
  await page.selectOption('#judge-task', 'utility');
  await page.waitForSelector('#judge-task-inputs[data-task="utility"]');
  await page.selectOption('#judge-provider', 'gemini');
  await page.waitForSelector('#judge-template-gemini');
  assert.equal(await page.$('#judge-template'), null, 'no echo for Gemini: no template choice');
  assert.equal(await page.$eval('#judge-provider', (s) => s.value), 'gemini', 'Gemini is kept for utilities');
  await page.fill('#judge-model', 'gemini-fake');
  await page.fill('#judge-base-url', fakeOrigin);
  await page.fill('#judge-key', 'test-gemini-key');
  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '3');
  assert.match(await page.textContent('#judge-estimate-summary'), /\/v1beta\/models\/gemini-fake:generateContent/);
  const before = await fakeCount(fakeOrigin);
  await page.click('#judge-start');
  await page.waitForSelector('#judge-result', { timeout: 60_000 });
  assert.equal(await fakeCount(fakeOrigin), before + 3);
  const sent = (await (await fetch(`${fakeOrigin}/__fake/requests`)).json()).requests.slice(before);
  assert.ok(sent.every((r) => JSON.parse(r.body).generationConfig.responseLogprobs === true), 'responseLogprobs asked');
  assert.match(await page.textContent('#judge-result-note'),
    /1 of 3 probabilities are only upper bounds .*; use an OpenAI-compatible server serving the model, with its GGUF or a template file, for exact values/);
  const pageJson = JSON.parse(await download(page, 'utilities-gemini-fake.json'));
  const cliOut = join(tmp, 'cli-gemini-utilities.json');
  execFileSync(cli, ['judge', 'utility', '--provider', 'gemini', '--base-url', fakeOrigin, '--model', 'gemini-fake',
    '--no-cache', '--quiet', '--log', join(tmp, 'log-gemini.jsonl'), fx('udcg.json'), '-o', cliOut],
  { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GEMINI_API_KEY: 'test-gemini-key' } });
  assert.deepEqual(pageJson, JSON.parse(await readFile(cliOut, 'utf8')));
  // The fake lists "NO" at the passage's lp among Gemini's topCandidates: p = e^lp.
  const info = (e, p) => pageJson[e].passages[p].models_info['gemini-fake'];
  assert.equal(info(0, 0).no_res_prob, Math.exp(-3.0));
  assert.equal(info(0, 1).no_res_prob, undefined, 'a bound is never a value');
  assert.ok(info(0, 1).no_res_prob_upper_bound > 0);
  assert.deepEqual(onlyOurOrigins(requests), []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a server whose echoed logprobs are misaligned is refused after the probe', async () => {
  const { context, page, errors, requests, csp } = await openJudges({ width: 390, height: 844 });
  await page.setInputFiles('#file-input', fx('udcg.json'));
  await page.waitForSelector('.file[data-kind="udcg-json"]', { timeout: 30_000 });
  await fillProvider(page, shiftedOrigin);
  await page.selectOption('#judge-template', 'text');
  await page.fill('#judge-template-text', TEMPLATE);
  await page.waitForSelector('#judge-template-status');
  await page.click('#judge-estimate');
  await page.waitForSelector('#judge-preview');
  assert.equal(await page.getAttribute('#judge-preview', 'data-requests'), '5');
  const before = await fakeCount(shiftedOrigin);
  await page.click('#judge-start');
  await page.waitForSelector('#judge-error', { timeout: 60_000 });
  const error = await page.textContent('#judge-error');
  assert.ok(error.startsWith(`${shiftedOrigin}/v1: refused: `) && error.includes('misaligned'), error);
  assert.equal(await fakeCount(shiftedOrigin), before + 2, 'only the probe');
  assert.equal(await page.$$eval('.file[data-kind="utilities"]', (f) => f.length), 0);
  await screenshot(page, 'phone-judge-utility-refused');
  assert.deepEqual(onlyOurOrigins(requests), []);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  await context.close();
});
