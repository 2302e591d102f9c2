// The trunk post_build hook (www/build/post-build.mjs) on a staged page: the CSP gets the hash
// of exactly the inline script, the default judge origins (the three providers and local
// servers) plus those given at build time (and nothing else), and sw.js its file list; bad
// origins stop the build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(process.env.RAGSCOPE_ROOT ?? '../..');
const hook = join(root, 'www/build/post-build.mjs');
const DEFAULTS = "https://api.anthropic.com https://generativelanguage.googleapis.com https://api.openai.com http://localhost:* http://127.0.0.1:*";
const re = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

async function stage() {
  const dir = await mkdtemp(join(tmpdir(), 'ragscope-stage-'));
  const source = await readFile(join(root, 'index.html'), 'utf8');
  const script = "\nimport init from './app-1.js';\nawait init();\n";
  await writeFile(join(dir, 'index.html'), source.replace('</head>', `<script type="module">${script}</script></head>`));
  await writeFile(join(dir, 'sw.js'), await readFile(join(root, 'www/sw.js'), 'utf8'));
  await mkdir(join(dir, 'demo'));
  await writeFile(join(dir, 'demo/q.test'), '1 0 d 1\n');
  await writeFile(join(dir, 'app-1.js'), '');
  return { dir, script };
}

test('the CSP carries the inline script hash, the default and the configured judge origins only', async () => {
  const { dir, script } = await stage();
  try {
    execFileSync('node', [hook], { env: { ...process.env, TRUNK_STAGING_DIR: dir, RAGSCOPE_JUDGE_ORIGINS: 'https://api.example.org/v1 http://localhost:8000' } });
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    const csp = html.match(/Content-Security-Policy" content="([^"]*)"/)[1];
    const hash = createHash('sha256').update(script).digest('base64');
    assert.match(csp, new RegExp(`script-src 'self' 'wasm-unsafe-eval' 'sha256-${hash.replace(/[+/]/g, '\\$&')}';`));
    assert.match(csp, new RegExp(`connect-src 'self' blob: ${re(DEFAULTS)} https://api\\.example\\.org http://localhost:8000;`));
    assert.doesNotMatch(csp, /unsafe-inline|__/);
    const sw = await readFile(join(dir, 'sw.js'), 'utf8');
    assert.match(sw, /const ASSETS = \["\.\/","\.\/app-1\.js","\.\/demo\/q\.test","\.\/index\.html"\];/);
    assert.doesNotMatch(sw, /__VERSION__|__ASSETS__/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('without RAGSCOPE_JUDGE_ORIGINS connect-src is exactly the app and the default judges; a bad origin fails the build', async () => {
  const { dir } = await stage();
  try {
    const env = { ...process.env, TRUNK_STAGING_DIR: dir };
    delete env.RAGSCOPE_JUDGE_ORIGINS;
    assert.throws(() => execFileSync('node', [hook], { env: { ...env, RAGSCOPE_JUDGE_ORIGINS: 'javascript:alert(1)' }, stdio: 'pipe' }));
    execFileSync('node', [hook], { env });
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    assert.match(html, new RegExp(`connect-src 'self' blob: ${re(DEFAULTS)};`));
    // A duplicate of a default is listed once.
    const again = await stage();
    try {
      execFileSync('node', [hook], { env: { ...env, TRUNK_STAGING_DIR: again.dir, RAGSCOPE_JUDGE_ORIGINS: 'https://api.openai.com/v1' } });
      const twice = await readFile(join(again.dir, 'index.html'), 'utf8');
      assert.match(twice, new RegExp(`connect-src 'self' blob: ${re(DEFAULTS)};`));
    } finally {
      await rm(again.dir, { recursive: true, force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
