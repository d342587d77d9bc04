// Per-call cost of the traffic-source classifier, channelOf and user-agent parsing, bundled from source with esbuild
// (one process, warmed up). Rows: classify on a typical event mix and on a mix of list referrers and unknown hosts;
// classify + channelOf; parseUserAgent on cache hits and on misses (every UA new, so ua-parser and the bot checks run
// each time); the bot check alone. With --against=<git ref> the same rows also run on that ref's libs (extracted with
// git archive), interleaved round by round, so a loaded machine slows both sides alike. Median of the rounds.
// Usage: node tools/bench/classifier.mjs [--against=main] [--seconds=1] [--rounds=5]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleFromSource } from './lib.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const seconds = Number(arg('seconds', 1));
const rounds = Number(arg('rounds', 5));
const against = arg('against', undefined);

async function load(root, label) {
  const bots = existsSync(join(root, 'libs/enrichment/src/bots.ts'));
  const { lib } = await bundleFromSource(`classifier-${label}`, [
    `import * as classifier from '${root}/libs/classifier/src/index';`,
    `import * as ua from '${root}/libs/enrichment/src/user-agent';`,
    bots ? `import * as bots from '${root}/libs/enrichment/src/bots';` : 'const bots = {};',
    'export { classifier, ua, bots };',
  ]);
  return { label, ...lib };
}

const versions = [await load(resolve('.'), 'this')];
let extracted;
if (against !== undefined) {
  extracted = mkdtempSync(join(tmpdir(), 'bench-classifier-'));
  execFileSync('sh', ['-c', `git archive ${against} libs/classifier libs/enrichment | tar -x -C ${extracted}`]);
  versions.push(await load(extracted, against.replace(/[^a-z0-9]+/gi, '-')));
}

const SITE = 'https://shop.example.com/landing';
const typical = [
  { url: `${SITE}?utm_source=newsletter&utm_medium=email&utm_campaign=spring`, referrer: 'https://mail.google.com/' },
  { url: SITE, referrer: 'https://www.google.co.uk/' },
  { url: `${SITE}?gclid=abc123`, referrer: 'https://www.google.com/' },
  { url: SITE, referrer: 'https://shop.example.com/cart' },
  { url: SITE },
  { url: `${SITE}?fbclid=xyz`, referrer: 'https://l.facebook.com/l.php?u=x' },
  { url: SITE, referrer: 'https://news.ycombinator.com/item?id=1' },
  { url: SITE, referrer: 'https://blog.some-unknown-site.example.org/post/1' },
];
const listMix = [
  'https://www.bing.com/', 'https://duckduckgo.com/', 'https://search.yahoo.co.jp/', 'https://yandex.ru/search',
  'https://www.reddit.com/r/x', 'https://t.co/abc', 'https://www.linkedin.com/feed', 'https://m.youtube.com/',
  'https://a.b.c.deep.subdomain.unknown-example.com/', 'https://www.baidu.com/s?wd=x', 'https://chatgpt.com/',
  'https://www.perplexity.ai/', 'https://outlook.live.com/', 'https://search.naver.com/', 'https://bsky.app/',
].map((referrer) => ({ url: SITE, referrer }));
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  'curl/8.5.0',
  'node',
];

/** ns per call of fn over `inputs`, run for `seconds` after a short warm-up. */
function nsPerCall(fn, inputs) {
  let sink = 0;
  for (let i = 0; i < 50_000; i++) sink += fn(inputs[i % inputs.length], i) ? 1 : 0;
  let calls = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  while (now < end) {
    for (let i = 0; i < 2_000; i++, calls++) sink += fn(inputs[calls % inputs.length], calls) ? 1 : 0;
    now = process.hrtime.bigint();
  }
  if (sink < 0) console.log(sink);
  return Number(now - start) / calls;
}

/** The rows a version can run: name -> () => ns. */
function rowsOf(v) {
  const { classify, channelOf } = v.classifier;
  const { parseUserAgent } = v.ua;
  const rows = {
    'classify, typical mix': () => nsPerCall((x) => classify(x), typical),
    'classify, list referrers and unknown hosts': () => nsPerCall((x) => classify(x), listMix),
  };
  if (channelOf) {
    rows['classify + channelOf, typical mix'] = () => nsPerCall((x) => channelOf(classify(x), x), typical);
    rows['classify + channelOf, list mix'] = () => nsPerCall((x) => channelOf(classify(x), x), listMix);
  }
  rows['parseUserAgent, cache hits'] = () => nsPerCall((ua) => parseUserAgent(ua), UAS);
  rows['parseUserAgent, every UA new (cache misses)'] = () => nsPerCall((ua, i) => parseUserAgent(`${ua} r/${i}`), UAS);
  if (v.bots.botNameOf) rows['botNameOf + serverLibraryOf alone, UA mix'] = () => nsPerCall((ua) => v.bots.serverLibraryOf(ua) ?? v.bots.botNameOf(ua), UAS);
  return rows;
}

const results = new Map(); // `${row}\0${label}` -> ns[]
const plans = versions.map((v) => [v.label, rowsOf(v)]);
for (let r = 0; r < rounds; r++) {
  for (const [label, rows] of plans) {
    for (const [row, run] of Object.entries(rows)) {
      const key = `${row}\0${label}`;
      if (!results.has(key)) results.set(key, []);
      results.get(key).push(run());
    }
  }
}
if (extracted !== undefined) rmSync(extracted, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const labels = versions.map((v) => v.label);
const rowNames = [...new Set([...results.keys()].map((k) => k.split('\0')[0]))];
console.log(`node ${process.version}, ${rounds} rounds of ${seconds} s per row, median ns/call; load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`${'row'.padEnd(46)} ${labels.map((l) => l.padStart(12)).join(' ')}`);
for (const row of rowNames) {
  const cells = labels.map((l) => (results.has(`${row}\0${l}`) ? median(results.get(`${row}\0${l}`)).toFixed(0) : '-').padStart(12));
  console.log(`${row.padEnd(46)} ${cells.join(' ')}`);
}
