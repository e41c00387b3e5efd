// Renders MJML in one warm Node process and reports the time of each
// render, with mjml 5.4.1 (the default) or, with `-engine mrml`, mrml 1.6.1
// (the Rust MJML renderer compiled to WebAssembly). Two ways to drive it:
//
//   node render.js [-engine mrml] -n 200 -warmup 20 a.mjml b.mjml
//     renders each file `warmup` times unmeasured (JIT, caches), then `n`
//     times, and prints one JSON line per file (mean, median, min);
//
//   node render.js [-engine mrml] -serve
//     reads one JSON request per line from stdin,
//       {"file": "a.mjml", "n": 40, "warmup": 0, "max_seconds": 10}
//     and answers each with one JSON line holding every render's time
//     ("times_ms") and the process's CPU time over them ("cpu_ms", every
//     thread: V8's collector helpers run beside the main thread), so that a
//     caller can interleave rounds of mjml with rounds of another renderer
//     and let both see the same machine load.
//
// mjml2html is awaited each time (it returns a promise in mjml 5), with
// default options, as an integrator would call it; mrml's one Engine is
// made once and its synchronous toHtml called each time, with default
// options too.
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

// engines: each renders MJML source to { html, errors } (mrml
// synchronously, so that its times hold no promise machinery), errors
// being the engine's validation messages (mjml) or its error (mrml refuses
// what it cannot parse).
const engines = {
  mjml() {
    const mjml2html = require('mjml');
    return async (src) => {
      const out = await mjml2html(src);
      return { html: out.html, errors: out.errors.map((e) => e.formattedMessage) };
    };
  },
  mrml() {
    const { Engine } = require('mrml');
    const engine = new Engine();
    return (src) => {
      const out = engine.toHtml(src);
      if (out.type !== 'success') return { html: '', errors: [`${out.origin}: ${out.message}`] };
      return { html: out.content, errors: [] };
    };
  },
};

function parseArgs(argv) {
  const opts = { engine: 'mjml', n: 100, warmup: 10, maxSeconds: 60, serve: false, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-engine') opts.engine = argv[++i];
    else if (a === '-n') opts.n = Number(argv[++i]);
    else if (a === '-warmup') opts.warmup = Number(argv[++i]);
    else if (a === '-max-seconds') opts.maxSeconds = Number(argv[++i]);
    else if (a === '-serve') opts.serve = true;
    else opts.files.push(a);
  }
  if (!(opts.n > 0) || !(opts.warmup >= 0) || (opts.files.length === 0) === !opts.serve || !Object.hasOwn(engines, opts.engine)) {
    console.error('usage: node render.js [-engine mjml|mrml] [-n N] [-warmup W] [-max-seconds S] file.mjml... | node render.js [-engine mjml|mrml] -serve');
    process.exit(2);
  }
  return opts;
}

// Sources are read once per process: the timed work is the engine's alone.
const sources = new Map();

// renderTimes renders file warmup times unmeasured, then up to n times
// (fewer if maxSeconds pass first), and returns each render's time in ms,
// the CPU time they took (ms, all threads) and the last output.
async function renderTimes(render, file, n, warmup, maxSeconds) {
  if (!sources.has(file)) sources.set(file, fs.readFileSync(file, 'utf8'));
  const src = sources.get(file);
  let out;
  // Only an engine that returns a promise is awaited.
  for (let i = 0; i < warmup; i++) {
    out = render(src);
    if (out instanceof Promise) out = await out;
  }
  const times = [];
  const cpu0 = process.cpuUsage();
  const stopAt = process.hrtime.bigint() + BigInt(Math.round(maxSeconds * 1e9));
  for (let i = 0; i < n && process.hrtime.bigint() < stopAt; i++) {
    const t0 = process.hrtime.bigint();
    out = render(src);
    if (out instanceof Promise) out = await out;
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  if (out === undefined) out = await render(src);
  return { times, cpuMs, out };
}

function outputInfo(out) {
  return {
    html_bytes: Buffer.byteLength(out.html),
    errors: out.errors.length,
    first_error: out.errors.length ? out.errors[0] : undefined,
  };
}

async function serve(render) {
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const req = JSON.parse(line);
    const { times, cpuMs, out } = await renderTimes(render, req.file, req.n, req.warmup || 0, req.max_seconds || 60);
    console.log(JSON.stringify({ file: path.basename(req.file), times_ms: times, cpu_ms: cpuMs, ...outputInfo(out) }));
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const render = engines[opts.engine]();
  if (opts.serve) return serve(render);
  for (const file of opts.files) {
    const { times, cpuMs, out } = await renderTimes(render, file, opts.n, opts.warmup, opts.maxSeconds);
    const sorted = [...times].sort((a, b) => a - b);
    console.log(JSON.stringify({
      file: path.basename(file),
      n: times.length,
      mean_ms: times.reduce((s, t) => s + t, 0) / times.length,
      median_ms: sorted[Math.floor(sorted.length / 2)],
      min_ms: sorted[0],
      cpu_ms_per_render: cpuMs / times.length,
      ...outputInfo(out),
    }));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
