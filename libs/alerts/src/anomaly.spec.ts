import { ANOMALY_SPREADS, anomaly, baselineOf, judge, median } from './anomaly';
import { dropDetection, replay, seasonalTraffic } from './seasonal-traffic';
import { refusedRange } from './address-guard';

// The anomaly rule (docs/alerts-and-reports.md, "How the anomaly condition decides") on chosen values, and the bounds
// BENCHMARKS.md measures on a synthetic year (tools/bench/alerts-anomaly.mjs), here on a smaller series.

describe('the anomaly rule', () => {
  it('centres on the median of the four weeks and spreads by their MAD, at least the count noise and 15%', () => {
    expect(median([3, 1, 2, 10])).toBe(2.5);
    const steady = baselineOf([100, 100, 100, 100]);
    expect(steady.expected).toBeCloseTo(100, 6);
    expect(steady.spread).toBe(0.15);
    expect(baselineOf([4, 4, 4, 4]).spread).toBeCloseTo(1 / Math.sqrt(5), 6);
    expect(baselineOf([50, 100, 200, 400]).spread).toBeGreaterThan(0.5);
  });

  it.each([
    ['a drop to zero of a site with traffic', 0, [20, 22, 18, 21], 'medium', true],
    ['a drop to zero of a small site', 0, [6, 5, 7, 4], 'medium', true],
    ['an ordinary hour', 95, [100, 110, 90, 105], 'medium', false],
    ['a 60% drop', 40, [100, 110, 90, 105], 'medium', true],
    ['a 50% drop at low sensitivity', 50, [100, 110, 90, 105], 'low', false],
    ['a tripling', 300, [100, 110, 90, 105], 'medium', true],
    ['+50%', 150, [100, 110, 90, 105], 'medium', false],
    ['+85% at high sensitivity', 190, [100, 110, 90, 105], 'high', true],
    ['no history (a new site)', 500, [0, 0, 0, 3], 'high', false],
  ] as const)('%s: holds %s', (_what, value, history, sensitivity, holds) => {
    expect(anomaly(value, history, sensitivity, false).holds).toBe(holds);
  });

  it('recovers only once back well within the bound (no flapping at the edge)', () => {
    const history = [100, 100, 100, 100];
    const fired = anomaly(40, history, 'medium', false);
    expect(fired.holds).toBe(true);
    const edge = Math.ceil(fired.threshold) + 1;
    expect(anomaly(edge, history, 'medium', false).holds).toBe(false);
    expect(anomaly(edge, history, 'medium', true).holds).toBe(true);
    expect(anomaly(95, history, 'medium', true).holds).toBe(false);
  });

  it('thresholds hold strictly above or below', () => {
    expect(judge({ above: 10 }, 11, [], false)).toEqual({ holds: true, threshold: 10 });
    expect(judge({ above: 10 }, 10, [], true).holds).toBe(false);
    expect(judge({ below: 10 }, 9, [], false).holds).toBe(true);
    expect(ANOMALY_SPREADS.low).toBeGreaterThan(ANOMALY_SPREADS.medium);
  });

  it('on half a year of seasonal traffic fires under 2 times a month at medium and catches most 60% drops of the day within two hours', () => {
    const series = seasonalTraffic({ hours: 26 * 168, peak: 300, seed: 1 });
    const { fires } = replay(series, 'medium', 1);
    const months = (series.length - 4 * 168 - 24) / (24 * 30.44);
    expect(fires.length / months).toBeLessThan(2);
    const daytime: number[] = [];
    for (let h = 5 * 168 + 8; h < series.length - 2; h += 24) daytime.push(h, h + 4, h + 8);
    const { detected, total } = dropDetection(series, 'medium', daytime);
    expect(detected / total).toBeGreaterThan(0.85);
  });
});

describe('the outbound address guard', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['::1', 'loopback'], ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['192.168.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'], ['fe80::1', 'linkLocal'], ['fd12::1', 'uniqueLocal'], ['0.0.0.0', 'unspecified'], ['::', 'unspecified'],
    ['::ffff:10.0.0.1', 'private'], ['100.64.0.1', 'carrierGradeNat'], ['224.0.0.1', 'multicast'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusedRange(address)).toBe(range);
  });
  it.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'])('lets %s through', (address) => {
    expect(refusedRange(address)).toBeUndefined();
  });
});
