// The Learn page "UDCG vs nDCG" end to end: the builder's numbers equal the CLI's (`ragscope
// eval` on a qrels + run + utilities written for the same context, `ragscope udcg` on a UDCG
// reference JSON of it) after a reorder, a drag and a toggle; a deep link restores a state;
// screenshots at desktop and phone widths; accessibility with axe-core (no serious violation),
// every control reachable by keyboard, charts labelled.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { startServer, launch, recordRequests, screenshot } from './harness.mjs';

const root = resolve(import.meta.dirname, '../..');
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

const foreign = (requests) => requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));

async function openLearn(hash = '#/learn/udcg-vs-ndcg', viewport = { width: 1280, height: 900 }, contextOptions = {}) {
  const context = await browser.newContext({ viewport, ...contextOptions });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const requests = recordRequests(page);
  await page.goto(`${origin}/?demo=0${hash}`);
  await page.waitForSelector('#cards li.card[data-docno]');
  return { context, page, errors, requests };
}

/** The cards in context order, as the page shows them. */
const cards = (page) => page.$$eval('#cards li.card[data-docno]', (li) => li.map((l) => ({
  docno: l.dataset.docno, relevant: l.dataset.relevant === 'true', p: l.dataset.p,
})));

/** The page's values, full precision (data-value), by measure id. */
async function shown(page) {
  const ids = ['ndcg', 'map', 'mrr', 'p', 'udcg'];
  const out = {};
  for (const id of ids) out[id] = Number(await page.$eval(`#m-${id}`, (tr) => tr.dataset.value));
  return out;
}

/** `ragscope eval` and `ragscope udcg` on files written from the cards (not from the page's own export). */
async function cliValues(cs, k) {
  const dir = await mkdtemp(join(tmpdir(), 'ragscope-learn-'));
  const qrels = cs.map((c) => `q1 0 ${c.docno} ${c.relevant ? 1 : 0}`).join('\n') + '\n';
  const run = cs.map((c, i) => `q1 Q0 ${c.docno} ${i + 1} ${cs.length - i} t`).join('\n') + '\n';
  const util = cs.map((c) => `q1\t${c.docno}\t${c.relevant ? 1 : 0}\t${c.p}`).join('\n') + '\n';
  await writeFile(join(dir, 'qrels'), qrels);
  await writeFile(join(dir, 'run'), run);
  await writeFile(join(dir, 'u.tsv'), util);
  const ms = [`nDCG@${k}`, 'MAP', 'MRR', `P@${k}`, `UDCG@${k}`];
  const out = JSON.parse(execFileSync(cli, ['eval', '--qrels', join(dir, 'qrels'), '--utilities', join(dir, 'u.tsv'),
    '-m', ms.join(','), '--format', 'json', join(dir, 'run')], { encoding: 'utf8' }));
  const s = out.runs[0].summary;
  // The UDCG reference JSON form of the same context (paper convention, γ = 1/3).
  const example = [{ example_id: 'q1', question: 'q', passages: cs.map((c) => ({
    doc_id: c.docno, text: '', is_relevant: c.relevant, models_info: { m: { no_res_prob: Number(c.p) } },
  })) }];
  await writeFile(join(dir, 'ctx.json'), JSON.stringify(example));
  execFileSync(cli, ['udcg', '--k', String(k), '-o', join(dir, 'scored.json'), join(dir, 'ctx.json')]);
  const scored = JSON.parse(await readFile(join(dir, 'scored.json'), 'utf8'));
  const udcgJson = scored[0].udcg?.m ?? scored[0].udcg;
  return { ndcg: s[ms[0]], map: s.MAP, mrr: s.MRR, p: s[ms[3]], udcg: s[ms[4]], udcgJson };
}

async function assertMatchesCli(page, when) {
  const cs = await cards(page);
  const k = Number(await page.$eval('#ctx-k', (i) => i.value));
  const mine = await shown(page);
  const theirs = await cliValues(cs, k);
  // Same code on both sides; only the math library differs (wasm32 has Rust's libm port for
  // exp/log2, the native CLI the platform's), by an ulp or so: hence 1e-12, not equality.
  for (const id of ['ndcg', 'map', 'mrr', 'p', 'udcg']) {
    assert.ok(Math.abs(mine[id] - theirs[id]) <= 1e-12, `${when}: ${id} page ${mine[id]} vs ragscope eval ${theirs[id]}`);
  }
  assert.equal(typeof theirs.udcgJson, 'number', `ragscope udcg output: ${JSON.stringify(theirs.udcgJson)}`);
  assert.ok(Math.abs(mine.udcg - theirs.udcgJson) <= 1e-12, `${when}: UDCG page ${mine.udcg} vs ragscope udcg ${theirs.udcgJson}`);
  return { cs, mine };
}

test('the builder scores like the CLI after a reorder, a drag and a toggle', async () => {
  const { context, page, errors, requests } = await openLearn();
  await assertMatchesCli(page, 'start');
  const before = await shown(page);
  // Keyboard reorder: the relevant passage (first) one step down.
  await page.click('button[aria-label="Move passage 1 down"]');
  const afterMove = (await assertMatchesCli(page, 'after ↓')).mine;
  assert.ok(afterMove.ndcg < before.ndcg, 'nDCG falls when the relevant passage moves down');
  assert.equal(afterMove.udcg, before.udcg, 'UDCG has no position discount');
  // Drag and drop: passage 4 onto passage 1.
  await page.dragAndDrop('#cards li.card:nth-child(4)', '#cards li.card:nth-child(1)');
  await assertMatchesCli(page, 'after drag');
  // Toggle relevance of passage 3, and move a slider with the keyboard.
  await page.click('button[aria-label="Passage 4 is relevant"]');
  await page.focus('#cards li.card:nth-child(5) input[type=range]');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  const { cs } = await assertMatchesCli(page, 'after toggle and slider');
  assert.equal(cs.filter((c) => c.relevant).length, 2);
  // Guided step 1: weak vs hard distractors give equal classical metrics, UDCG apart.
  await page.click('#step-weak');
  const weak = (await assertMatchesCli(page, 'weak')).mine;
  await page.click('#step-hard');
  const hard = (await assertMatchesCli(page, 'hard')).mine;
  for (const id of ['ndcg', 'map', 'mrr', 'p']) assert.equal(weak[id], hard[id], id);
  assert.ok(hard.udcg < weak.udcg);
  // Step 3: a hard distractor scores below a missing passage (empty slot).
  await page.click('#step-missing');
  const missing = (await assertMatchesCli(page, 'missing')).mine;
  await page.click('#step-one-hard');
  const oneHard = (await assertMatchesCli(page, 'one hard')).mine;
  for (const id of ['ndcg', 'map', 'mrr', 'p']) assert.equal(missing[id], oneHard[id], id);
  assert.ok(oneHard.udcg < missing.udcg);
  // The history chart is labelled for screen readers with the latest values.
  const label = await page.$eval('#chart-history', (s) => s.getAttribute('aria-label'));
  assert.match(label, /UDCG \d\.\d{3}/);
  assert.deepEqual(foreign(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a deep link restores the exact context', async () => {
  const { context, page, errors } = await openLearn();
  await page.click('#step-hard');
  // each change shown (and in the link) before the next: the slider pressed must be the moved
  // card's, and the link read must hold the slider's new value
  const first = (await cards(page))[0].docno;
  await page.click('button[aria-label="Move passage 1 down"]');
  await page.waitForFunction((d) => document.querySelector('#cards li.card[data-docno]').dataset.docno !== d, first);
  await page.click('button[aria-label="Passage 4 is relevant"]');
  await page.waitForFunction(() => document.querySelectorAll('#cards li.card[data-relevant="true"]').length > 0);
  const second = (await cards(page))[1];
  const linked = page.url();
  await page.focus('#cards li.card:nth-child(2) input[type=range]');
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(([p, u]) => {
    const now = document.querySelector('#cards li.card:nth-child(2)').dataset.p;
    return now !== p && location.href !== u && location.href.includes(now);
  }, [second.p, linked]);
  const url = page.url();
  assert.match(url, /#\/learn\/udcg-vs-ndcg\?k=5&c=/);
  const state = await cards(page);
  const values = await shown(page);
  const other = await context.newPage();
  await other.goto(url);
  await other.waitForSelector('#cards li.card[data-docno]');
  const restored = await cards(other);
  assert.deepEqual(restored.map((c) => [c.relevant, c.p]), state.map((c) => [c.relevant, c.p]));
  assert.deepEqual(await shown(other), values);
  assert.deepEqual(errors, []);
  await context.close();
});

test('screenshots at desktop and phone widths, and the real SmolLM2 contexts', async () => {
  const { context, page, errors } = await openLearn();
  await page.waitForSelector('#real-question option[value]:not([value=""])', { state: 'attached' });
  const qid = await page.$eval('#real-question option[value]:not([value=""])', (o) => o.value);
  await page.selectOption('#real-question', qid);
  await page.waitForFunction(() => document.querySelectorAll('#cards li.card .card-text').length >= 1);
  await assertMatchesCli(page, 'real question');
  // A deep link to a real context brings back its question, titles and texts.
  const titles = await page.$$eval('#cards .card-title', (t) => t.map((x) => x.textContent));
  const linked = await context.newPage();
  await linked.goto(page.url());
  await linked.waitForFunction((n) => document.querySelectorAll('#cards .card-text').length === n, titles.length);
  assert.deepEqual(await linked.$$eval('#cards .card-title', (t) => t.map((x) => x.textContent)), titles);
  assert.equal(await linked.$eval('.question', (q) => q.textContent), await page.$eval('.question', (q) => q.textContent));
  await linked.close();
  assert.match(await page.textContent('.real'), /SmolLM2-135M-Instruct/);
  assert.match(await page.textContent('.real'), /Only 3 of the subset's 60 questions keep/);
  await screenshot(page, 'learn-desktop');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'learn-phone');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways on a phone by ${overflow}px`);
  await page.goto(`${origin}/?demo=0#/learn/lost-in-the-middle`);
  await page.waitForSelector('#litm-data-note');
  assert.match(await page.textContent('#litm-data-note'), /Only 3 of them keep the paper's own distractors/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('accessibility: axe-core finds no serious violation; every control is reachable by keyboard', async () => {
  // axe is injected as a script: the test context bypasses the page's CSP for it only.
  const { context, page, errors } = await openLearn('#/learn/udcg-vs-ndcg', undefined, { bypassCSP: true });
  const require = createRequire(import.meta.url);
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const result = await page.evaluate(async () => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  assert.deepEqual(bad, []);
  // Tab through the page: every enabled control of the builder and the steps gets focus.
  const controls = await page.$$eval('.learn-page button:not([disabled]), .learn-page input, .learn-page select, .learn-page a[href]',
    (els) => els.map((e, i) => { e.dataset.tabCheck = String(i); return i; }));
  const reached = new Set();
  for (let i = 0; i < controls.length + 40; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement?.dataset?.tabCheck);
    if (id !== undefined) reached.add(Number(id));
  }
  const missed = controls.filter((i) => !reached.has(i));
  assert.deepEqual(missed, [], 'controls never reached with Tab');
  assert.deepEqual(errors, []);
  await context.close();
});
