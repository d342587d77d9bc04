// Per-call cost of the traffic-source classifier and of user-agent parsing (bundled from source with esbuild, one
// process, warmed up). Prints ns per call for a typical event mix, a mix of list referrers and unknown hosts, and the
// user-agent parser on cache hits and on misses (every UA new, so ua-parser and the bot check run each time).
// Usage: node tools/bench/classifier.mjs [--seconds=2]
import { bundleFromSource } from './lib.mjs';

const seconds = Number(process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? 2);
const { lib } = await bundleFromSource('classifier', [
  "export { classify } from './libs/classifier/src/index';",
  "export { parseUserAgent } from './libs/enrichment/src/user-agent';",
]);
const { classify, parseUserAgent } = lib;
const extra = lib.channelOf ? lib : {};

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
const hosts = [
  'https://www.bing.com/', 'https://duckduckgo.com/', 'https://search.yahoo.co.jp/', 'https://yandex.ru/search',
  'https://www.reddit.com/r/x', 'https://t.co/abc', 'https://www.linkedin.com/feed', 'https://m.youtube.com/',
  'https://a.b.c.deep.subdomain.unknown-example.com/', 'https://www.baidu.com/s?wd=x', 'https://chatgpt.com/',
  'https://www.perplexity.ai/', 'https://outlook.live.com/', 'https://search.naver.com/', 'https://bsky.app/',
];
const listMix = hosts.map((referrer) => ({ url: SITE, referrer }));
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

/** ns per call of fn over `inputs`, run for `seconds` after a warm-up. */
function nsPerCall(fn, inputs) {
  let sink = 0;
  for (let i = 0; i < 200_000; i++) sink += fn(inputs[i % inputs.length], i) ? 1 : 0;
  let calls = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  while (now < end) {
    for (let i = 0; i < 10_000; i++, calls++) sink += fn(inputs[calls % inputs.length], calls) ? 1 : 0;
    now = process.hrtime.bigint();
  }
  if (sink < 0) console.log(sink);
  return Number(now - start) / calls;
}

const rows = [
  ['classify, typical mix', nsPerCall((x) => classify(x), typical)],
  ['classify, list referrers and unknown hosts', nsPerCall((x) => classify(x), listMix)],
];
if (extra.channelOf) {
  rows.push(['classify + channelOf, typical mix', nsPerCall((x) => extra.channelOf(classify(x), x), typical)]);
}
rows.push(['parseUserAgent, cache hits', nsPerCall((ua) => parseUserAgent(ua), UAS)]);
rows.push(['parseUserAgent, every UA new (cache misses)', nsPerCall((ua, i) => parseUserAgent(`${ua} r/${i}`), UAS)]);

console.log(`node ${process.version}, ${seconds} s per row`);
for (const [name, ns] of rows) console.log(`${name.padEnd(48)} ${ns.toFixed(0).padStart(8)} ns/call`);
