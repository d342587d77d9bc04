import uPlot from 'uplot';
import { type AnnotationMark, annotationsPlugin } from './annotations';
import { COUNT_STEPS, DAY_MS, type Interval, bucketTicks, dayTickLabel, legendValue } from './state';

export interface Series {
  /** Bucket starts: the wall clock in the project's time zone, as epoch ms read as UTC. */
  buckets: number[];
  /** The project's time zone (IANA name), named in an hourly bucket's label. */
  timeZone?: string;
  /** Per bucket; null for a bucket still to come. */
  visitors: (number | null)[];
  pageviews: (number | null)[];
  /** With compare: the previous period's visitors, per bucket of this one (the same stretch one period earlier). */
  previous?: (number | null)[];
  /** The range's figures (as the headline shows them), for the legend while nothing is hovered. */
  totals: { visitors: number; pageviews: number; previous?: number };
  /** The range's annotations by bucket (issue 48), drawn as markers; `onBucket`: a click on the plot names its bucket (editors). */
  annotations?: { marks: AnnotationMark[]; onBucket?: (bucket: number) => void };
}

const exact = new Intl.NumberFormat('en');

function bucketLabel(ms: number, interval: Interval, timeZone = 'UTC'): string {
  const iso = new Date(ms).toISOString();
  if (interval === 'hour') return `${iso.slice(0, 10)} ${iso.slice(11, 16)} ${timeZone}`;
  return interval === 'week' ? `week of ${iso.slice(0, 10)}` : iso.slice(0, 10);
}

/** A tooltip naming the bucket under the cursor and its values (with compare, the previous period's visitors too). */
function tooltipPlugin(interval: Interval, timeZone?: string): uPlot.Plugin {
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
        const [xs, visitors, pageviews, previous] = u.data;
        if (visitors![i] === null || visitors![i] === undefined) {
          tip.hidden = true;
          return;
        }
        tip.hidden = false;
        const before = previous ? ` · ${exact.format(previous[i] ?? 0)} visitors the period before` : '';
        tip.textContent = `${bucketLabel(xs[i]! * 1000, interval, timeZone)} · ${exact.format(visitors![i]!)} visitors · ${exact.format(pageviews![i] ?? 0)} pageviews${before}`;
        const left = Math.min(u.cursor.left, u.over.clientWidth - tip.offsetWidth);
        tip.style.transform = `translate(${Math.max(0, left)}px, 0)`;
      },
    },
  };
}

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** Day and week totals as side-by-side bars on day ticks (a line between two days would invent the hours between). */
function dailyOptions(data: Series, interval: Interval): Pick<uPlot.Options, 'scales'> & { splits: uPlot.Axis.Splits; values: uPlot.Axis.Values; paths: [uPlot.Series.PathBuilder, uPlot.Series.PathBuilder] } {
  const half = (interval === 'week' ? 7 * DAY_MS : DAY_MS) / 2000;
  const bars = (align: -1 | 1) => uPlot.paths.bars!({ size: [0.4, 40], align });
  return {
    scales: { x: { time: true, range: (_u, min, max) => [min - half, max + half] } },
    splits: (u) => bucketTicks(data.buckets, u.bbox.width / devicePixelRatio).map((ms) => ms / 1000),
    values: (_u, splits) => splits.map((s) => dayTickLabel(s * 1000)),
    paths: [bars(-1), bars(1)],
  };
}

/** Draws (or redraws) the visitors/pageviews chart into `el`; returns the plot so the caller can destroy it. */
export function drawChart(el: HTMLElement, data: Series, interval: Interval): uPlot {
  const text = cssVar('--muted');
  const grid = cssVar('--grid');
  const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const daily = interval === 'hour' ? undefined : dailyOptions(data, interval);
  // An hourly chart early in the day (Today at 00:40) has one or two buckets so far: a line needs two points, so each is drawn as a dot.
  const sparse = data.visitors.filter((v) => v !== null).length < 3;
  const points = { show: !daily && sparse, size: 7 };
  const legend = (total: number) => (_u: uPlot, v: number | null, _s: number, idx: number | null) => legendValue(v, idx !== null, total);
  const opts: uPlot.Options = {
    width: Math.max(280, el.clientWidth),
    height: 240,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    cursor: { drag: { x: false, y: false } },
    legend: { show: true },
    plugins: [tooltipPlugin(interval, data.timeZone), ...(data.annotations ? [annotationsPlugin(data.annotations.marks, data.timeZone ?? 'UTC', data.annotations.onBucket)] : [])],
    scales: { x: { time: true }, ...daily?.scales, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    axes: [daily ? { ...axis, splits: daily.splits, values: daily.values } : axis, { ...axis, incrs: [...COUNT_STEPS], values: (_u, ticks) => ticks.map((t) => exact.format(t)) }],
    series: [
      { value: (_u, v) => (v === null ? '' : bucketLabel(v * 1000, interval, data.timeZone)) },
      { label: 'Visitors', stroke: cssVar('--accent'), width: 2, fill: cssVar('--accent-fill'), points, paths: daily?.paths[0], value: legend(data.totals.visitors) },
      { label: 'Pageviews', stroke: cssVar('--accent-2'), width: 2, fill: daily ? cssVar('--accent-2-fill') : undefined, points, paths: daily?.paths[1], value: legend(data.totals.pageviews) },
      // The previous period's visitors: a dashed line over both kinds of chart (bars would crowd the day's pair).
      ...(data.previous ? [{ label: 'Visitors, previous period', stroke: cssVar('--muted'), width: 2, dash: [6, 4], points: { show: !!daily, size: 5 }, value: legend(data.totals.previous ?? 0) }] : []),
    ],
  };
  el.replaceChildren();
  const series: uPlot.AlignedData = [data.buckets.map((ms) => ms / 1000), data.visitors, data.pageviews, ...(data.previous ? [data.previous] : [])];
  return new uPlot(opts, series, el);
}
