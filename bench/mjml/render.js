// Renders MJML files with mjml in one warm Node process and prints, per
// file, the time of one render (JSON, one line per file).
//
//   node render.js -n 200 -warmup 20 a.mjml b.mjml
//
// Each file is rendered `warmup` times unmeasured (JIT, caches), then `n`
// times, each timed on its own; mjml2html is awaited each time (it returns
// a promise in mjml 5). Default options, as an integrator would call it.
'use strict';

const fs = require('fs');
const path = require('path');
const mjml2html = require('mjml');

function parseArgs(argv) {
  const opts = { n: 100, warmup: 10, maxSeconds: 60, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-n') opts.n = Number(argv[++i]);
    else if (a === '-warmup') opts.warmup = Number(argv[++i]);
    else if (a === '-max-seconds') opts.maxSeconds = Number(argv[++i]);
    else opts.files.push(a);
  }
  if (!(opts.n > 0) || !(opts.warmup >= 0) || opts.files.length === 0) {
    console.error('usage: node render.js [-n N] [-warmup W] [-max-seconds S] file.mjml...');
    process.exit(2);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  for (const file of opts.files) {
    const src = fs.readFileSync(file, 'utf8');
    let out = await mjml2html(src);
    for (let i = 1; i < opts.warmup; i++) out = await mjml2html(src);
    const times = [];
    // Bounded in time as well as count: a slow document stops early.
    const stopAt = process.hrtime.bigint() + BigInt(Math.round(opts.maxSeconds * 1e9));
    for (let i = 0; i < opts.n && process.hrtime.bigint() < stopAt; i++) {
      const t0 = process.hrtime.bigint();
      out = await mjml2html(src);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const mean = times.reduce((s, t) => s + t, 0) / times.length;
    console.log(JSON.stringify({
      file: path.basename(file),
      n: times.length,
      mean_ms: mean,
      median_ms: sorted[Math.floor(sorted.length / 2)],
      min_ms: sorted[0],
      html_bytes: Buffer.byteLength(out.html),
      errors: out.errors.length,
      first_error: out.errors.length ? out.errors[0].formattedMessage : undefined,
    }));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
