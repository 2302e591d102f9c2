// Trunk post_build hook (Trunk.toml): makes the built page's Content-Security-Policy exact and
// writes the service worker's list of files to cache.
//  - trunk injects an inline module script that starts the app: its SHA-256 goes into
//    script-src, so no 'unsafe-inline' is needed;
//  - connect-src is 'self', the LLM providers the Judges panel calls by default (Anthropic,
//    Gemini, OpenAI, and local servers on localhost/127.0.0.1 such as vLLM, llama.cpp, Ollama)
//    plus the judge origins given in RAGSCOPE_JUDGE_ORIGINS (space separated, e.g.
//    "https://llm.example.org http://10.0.0.5:8000"); nothing else. The page itself sends
//    nothing to any of them: only the judge worker does, after the user presses Start;
//  - sw.js gets the built file names and a version derived from their contents.
import { createHash } from 'node:crypto';
import { readFile, writeFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('TRUNK_STAGING_DIR is not set: run me as a trunk post_build hook');

const indexPath = join(dir, 'index.html');
let html = await readFile(indexPath, 'utf8');
const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)]
  .map((m) => `'sha256-${createHash('sha256').update(m[1], 'utf8').digest('base64')}'`);
if (hashes.length === 0) throw new Error('no inline script found in index.html: the CSP hook needs updating');

// Exactly these, always (issue 8): the three providers' API origins and local servers on any port.
const DEFAULT_JUDGE_ORIGINS = [
  'https://api.anthropic.com',
  'https://generativelanguage.googleapis.com',
  'https://api.openai.com',
  'http://localhost:*',
  'http://127.0.0.1:*',
];

const extra = (process.env.RAGSCOPE_JUDGE_ORIGINS ?? '').split(/\s+/).filter(Boolean).map((o) => {
  const u = new URL(o);
  if (u.origin === 'null' || !/^https?:$/.test(u.protocol)) throw new Error(`not an http(s) origin: ${o}`);
  return u.origin;
});
const origins = [...new Set([...DEFAULT_JUDGE_ORIGINS, ...extra])];
if (!html.includes('__INLINE_SCRIPT_HASHES__') || !html.includes('__JUDGE_ORIGINS__')) {
  throw new Error('index.html lost its CSP placeholders');
}
html = html.replace('__INLINE_SCRIPT_HASHES__', hashes.join(' '))
  .replace('__JUDGE_ORIGINS__', origins.join(' '));
await writeFile(indexPath, html);

async function files(d) {
  const out = [];
  for (const e of await readdir(d, { withFileTypes: true })) {
    const p = join(d, e.name);
    if (e.isDirectory()) out.push(...await files(p));
    else out.push(p);
  }
  return out;
}
const all = (await files(dir)).map((p) => relative(dir, p).split('\\').join('/'))
  .filter((p) => p !== 'sw.js').sort();
const version = createHash('sha256');
for (const f of all) version.update(f).update(await readFile(join(dir, f)));
// Not pre-cached: one page's own data (the lost-in-the-middle set, 630 KB, fetched only by that
// page and cached by the service worker when it is), and the host's header file.
const onDemand = new Set(['learn/litm-nq.json', '_headers']);
const swPath = join(dir, 'sw.js');
const sw = (await readFile(swPath, 'utf8'))
  .replace('__ASSETS__', JSON.stringify(['./', ...all.filter((f) => !onDemand.has(f)).map((f) => './' + f)]))
  .replace('__VERSION__', version.digest('hex').slice(0, 16));
await writeFile(swPath, sw);
console.log(`post-build: CSP with ${hashes.length} script hash(es), ${origins.length} judge origin(s) (${extra.length} from RAGSCOPE_JUDGE_ORIGINS); sw.js caches ${all.length + 1} files`);
