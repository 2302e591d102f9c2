// The CPU engine's prefill in wasm32 under Node, one thread (crates/infer/examples/
// wasm_cpu_bench.rs, built for wasm32-unknown-unknown with +simd128 as the app is). Usage:
//   node wasm_cpu.cjs MODULE.wasm MODEL.gguf [prompts] [tokens] [runs]
// One untimed warm-up batch (V8 tiers the module up from Liftoff to TurboFan), then `runs`
// timed batches of `prompts` prompts × `tokens` tokens; prints one JSON line with each run's
// tokens/s, their median and the logits checksum (equal across runs, compared across builds).
const fs = require('node:fs');
const [wasmPath, modelPath, promptsArg, tokensArg, runsArg] = process.argv.slice(2);
const prompts = Number(promptsArg ?? 4);
const tokens = Number(tokensArg ?? 256);
const runs = Number(runsArg ?? 5);
const instance = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(wasmPath)), {});
const e = instance.exports;
if (e.bench_selfcheck() !== 0) {
  console.error('the simd128 matmul kernel differs from the portable one it twins');
  process.exit(1);
}
const gguf = fs.readFileSync(modelPath);
const ptr = e.bench_alloc(gguf.length);
new Uint8Array(e.memory.buffer, ptr, gguf.length).set(gguf);
if (e.bench_load(ptr, gguf.length) !== 0) {
  console.error(`${modelPath}: the engine does not load this model`);
  process.exit(1);
}
const checksum = e.bench_prefill(prompts, tokens);
const perS = [];
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint();
  const sum = e.bench_prefill(prompts, tokens);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (sum !== checksum) {
    console.error(`run ${i}: checksum ${sum} differs from the warm-up's ${checksum}`);
    process.exit(1);
  }
  perS.push((prompts * tokens) / s);
}
const sorted = [...perS].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
console.log(JSON.stringify({
  engine: 'ragscope-infer cpu, wasm32 simd128 in Node ' + process.version,
  model: modelPath, prompts, tokens, runs,
  tokens_per_s: perS.map((v) => Math.round(v * 10) / 10),
  median_tokens_per_s: Math.round(median * 10) / 10,
  checksum,
}));
