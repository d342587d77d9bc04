import { LIMITS } from '@analytics/schema';
import { clockSkewOf, withClockSkewCorrected } from './clock-skew';

const NOW = Date.UTC(2026, 10, 28, 12);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('clock skew of a batch (sent_at against the arrival)', () => {
  it.each([
    ['no sent_at', undefined, 0],
    ['sent_at = arrival', NOW, 0],
    ['5 s early (the network)', NOW - 5_000, 0],
    ['5 s late', NOW + 5_000, 0],
    ['5.001 s early', NOW - 5_001, 5_001],
    ['an hour ahead', NOW + HOUR, -HOUR],
    ['a day ahead', NOW + DAY, -DAY],
    ['an hour behind', NOW - HOUR, HOUR],
    ['a day behind', NOW - DAY, DAY],
  ])('%s', (_, sentAt, skew) => {
    expect(clockSkewOf(sentAt, NOW)).toBe(skew);
  });

  it('moves sent timestamps only, within the accepted range; 0 leaves the batch as it is', () => {
    const batch = [{ event: 'a', timestamp: NOW + DAY }, { event: 'b' }, { event: 'c', timestamp: LIMITS.timestamp.max - 1 }];
    expect(withClockSkewCorrected(batch, 0)).toBe(batch);
    expect(withClockSkewCorrected(batch, -DAY)).toEqual([{ event: 'a', timestamp: NOW }, { event: 'b' }, { event: 'c', timestamp: LIMITS.timestamp.max - 1 - DAY }]);
    expect(withClockSkewCorrected(batch, DAY)[2]).toEqual({ event: 'c', timestamp: LIMITS.timestamp.max - 1 });
  });
});
