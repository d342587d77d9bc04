import uPlot from 'uplot';
import type { Interval } from './state';

export interface Series {
  /** Bucket starts, epoch ms. */
  buckets: number[];
  visitors: number[];
  pageviews: number[];
}

const exact = new Intl.NumberFormat('en');

function bucketLabel(ms: number, interval: Interval): string {
  const iso = new Date(ms).toISOString();
  if (interval === 'hour') return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return interval === 'week' ? `week of ${iso.slice(0, 10)}` : iso.slice(0, 10);
}

/** A tooltip naming the bucket under the cursor and its two values. */
function tooltipPlugin(interval: Interval): uPlot.Plugin {
  let tip: HTMLDivElement;
  return {
    hooks: {
      init: (u) => {
        tip = document.createElement('div');
        tip.className = 'chart-tip';
        tip.setAttribute('role', 'status');
        tip.hidden = true;
        u.over.appendChild(tip);
      },
      setCursor: (u) => {
        const i = u.cursor.idx;
        if (i === null || i === undefined || u.cursor.left === undefined || u.cursor.left < 0) {
          tip.hidden = true;
          return;
        }
        const [xs, visitors, pageviews] = u.data;
        tip.hidden = false;
        tip.textContent = `${bucketLabel(xs[i]! * 1000, interval)} · ${exact.format(visitors![i] ?? 0)} visitors · ${exact.format(pageviews![i] ?? 0)} pageviews`;
        const left = Math.min(u.cursor.left, u.over.clientWidth - tip.offsetWidth);
        tip.style.transform = `translate(${Math.max(0, left)}px, 0)`;
      },
    },
  };
}

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** Draws (or redraws) the visitors/pageviews chart into `el`; returns the plot so the caller can destroy it. */
export function drawChart(el: HTMLElement, data: Series, interval: Interval): uPlot {
  const text = cssVar('--muted');
  const grid = cssVar('--grid');
  const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const opts: uPlot.Options = {
    width: Math.max(280, el.clientWidth),
    height: 240,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    cursor: { drag: { x: false, y: false } },
    legend: { show: true },
    plugins: [tooltipPlugin(interval)],
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    axes: [axis, { ...axis, values: (_u, ticks) => ticks.map((t) => exact.format(t)) }],
    series: [
      { value: (_u, v) => (v === null ? '' : bucketLabel(v * 1000, interval)) },
      { label: 'Visitors', stroke: cssVar('--accent'), width: 2, fill: cssVar('--accent-fill'), points: { show: false }, value: (_u, v) => exact.format(v ?? 0) },
      { label: 'Pageviews', stroke: cssVar('--accent-2'), width: 2, points: { show: false }, value: (_u, v) => exact.format(v ?? 0) },
    ],
  };
  el.replaceChildren();
  return new uPlot(opts, [data.buckets.map((ms) => ms / 1000), data.visitors, data.pageviews], el);
}
