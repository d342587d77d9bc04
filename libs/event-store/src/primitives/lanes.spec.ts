import { farMonthCount, isLivePartition, isLiveWrite } from './lanes';

const NOW = Date.UTC(2026, 0, 15, 12); // mid-January 2026: live months are December 2025, January and February 2026
const ts = (y: number, m: number, d = 10) => new Date(Date.UTC(y, m, d)).toISOString().replace('T', ' ').slice(0, 23);

describe('live months', () => {
  it.each([
    ['this month', [ts(2026, 0)], true],
    ['last month, across the year boundary', [ts(2025, 11, 31)], true],
    ['next month (a clock ahead at the month end)', [ts(2026, 1, 1)], true],
    ['two months back', [ts(2025, 10, 30)], false],
    ['two months ahead', [ts(2026, 2, 1)], false],
    ['one far row among live ones', [ts(2026, 0), ts(2026, 0), ts(2019, 3)], false],
  ])('a write of rows in %s is live: %s', (_n, times, expected) => {
    expect(isLiveWrite(times.map((timestamp) => ({ timestamp })), NOW)).toBe(expected);
  });

  it('counts the distinct months outside the live ones; an omitted timestamp is the arrival time', () => {
    const months = Array.from({ length: 1000 }, (_, i) => Date.UTC(2000, i, 15));
    expect(farMonthCount(months, NOW)).toBe(997); // three of 2000-2083's months are live
    expect(farMonthCount([undefined, NOW, Date.UTC(2025, 11, 1)], NOW)).toBe(0);
    expect(farMonthCount([Date.UTC(2024, 1, 1), Date.UTC(2024, 1, 28), Date.UTC(2024, 2, 1)], NOW)).toBe(2);
  });

  it.each([
    ['202512', true],
    ['202601', true],
    ['202602', true],
    ['202511', false],
    ['202603', false],
  ])('partition %s is live: %s', (id, expected) => {
    expect(isLivePartition(id, NOW)).toBe(expected);
  });
});
