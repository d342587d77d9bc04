// False alarms and drop detection of the alerts' anomaly rule (libs/alerts anomaly.ts, the function the alerts job
// calls), on a synthetic year of hourly traffic with daily and weekly cycles and noise (libs/alerts seasonal-traffic.ts).
// For each traffic size: fires per month at each sensitivity for the 1h and 1d windows (evaluated every hour over the
// year after the four weeks of history), and the share of 60% drops (one started at every 7th hour) caught within two
// hours by the 1h window at medium, by the hour of day they start (business hours: 08-20), and drops to zero (a broken
// snippet) in business hours caught by the first window after them.
// Usage: node tools/bench/alerts-anomaly.mjs [--seeds=5]
import { bundleFromSource } from './lib.mjs';

const seeds = Number(process.argv.find((a) => a.startsWith('--seeds='))?.split('=')[1] ?? 5);
const { lib } = await bundleFromSource('alerts-anomaly', ["export * from './libs/alerts/src/seasonal-traffic';"]);
const HOURS = 24 * 365;
const MONTHS = (HOURS - 4 * 168 - 24) / (24 * 30.44);
const fmt = (n) => n.toFixed(2);

console.log(`| peak pageviews/h | window | low | medium | high | 60% drop caught within 2 h (medium), all hours | business hours (08-20) | drop to zero caught within 1 h, business hours |`);
console.log('|---:|---|---:|---:|---:|---:|---:|---:|');
for (const peak of [30, 300, 3000]) {
  for (const width of [1, 24]) {
    const fires = { low: 0, medium: 0, high: 0 };
    let caught = 0, total = 0, bizCaught = 0, bizTotal = 0, zeroCaught = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const series = lib.seasonalTraffic({ hours: HOURS, peak, seed });
      for (const s of Object.keys(fires)) fires[s] += lib.replay(series, s, width).fires.length;
      if (width === 1) {
        const starts = [];
        for (let h = 5 * 168; h < HOURS - 2; h += 7) starts.push(h);
        const biz = starts.filter((h) => h % 24 >= 8 && h % 24 < 20);
        const all = lib.dropDetection(series, 'medium', starts);
        const inBiz = lib.dropDetection(series, 'medium', biz);
        caught += all.detected; total += all.total; bizCaught += inBiz.detected; bizTotal += inBiz.total;
        zeroCaught += lib.dropDetection(series, 'medium', biz, 1, 1).detected;
      }
    }
    const perMonth = (n) => fmt(n / seeds / MONTHS);
    const pct = (a, b) => `${((100 * a) / b).toFixed(1)}%`;
    const drops = width === 1 ? [pct(caught, total), pct(bizCaught, bizTotal), pct(zeroCaught, bizTotal)] : ['', '', ''];
    console.log(`| ${peak} | ${width === 1 ? '1h' : '1d'} | ${perMonth(fires.low)} | ${perMonth(fires.medium)} | ${perMonth(fires.high)} | ${drops.join(' | ')} |`);
  }
}
console.log(`\n${seeds} synthetic years per size (seeds 1-${seeds}); fires per month = new firings (ok -> firing) / ${fmt(MONTHS)} months evaluated.`);
