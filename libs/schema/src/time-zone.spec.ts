import { insightsBodySchema } from './insights.schema';
import { statsParamsSchema } from './read.schema';
import { isTimeZone, localDate, localMidnight, offsetAt, rangeInZone, zonedInstant } from './time-zone';

describe('time zone names', () => {
  it('accepts IANA names Intl knows (and the links it resolves), UTC; refuses abbreviations, offsets, other cases and unknown names', () => {
    for (const name of ['UTC', 'Europe/Berlin', 'America/Los_Angeles', 'Asia/Kolkata', 'Asia/Calcutta', 'America/Argentina/Buenos_Aires']) expect({ name, ok: isTimeZone(name) }).toEqual({ name, ok: true });
    for (const name of ['', 'utc', 'CET+1', 'EST', 'europe/berlin', 'Europe/Berlin ', '+02:00', 'Mars/Olympus', 'Europe/../etc', "Europe/Berlin'"]) expect({ name, ok: isTimeZone(name) }).toEqual({ name, ok: false });
  });
});

describe('local midnights and offsets', () => {
  it('gives the instant each local date begins, across the 2026 DST changes (days of 23 and 25 hours)', () => {
    expect(new Date(localMidnight('2026-03-29', 'Europe/Berlin')).toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(new Date(localMidnight('2026-03-30', 'Europe/Berlin')).toISOString()).toBe('2026-03-29T22:00:00.000Z');
    expect(localMidnight('2026-03-30', 'Europe/Berlin') - localMidnight('2026-03-29', 'Europe/Berlin')).toBe(23 * 3_600_000);
    expect(localMidnight('2026-10-26', 'Europe/Berlin') - localMidnight('2026-10-25', 'Europe/Berlin')).toBe(25 * 3_600_000);
    expect(localMidnight('2026-03-09', 'America/Los_Angeles') - localMidnight('2026-03-08', 'America/Los_Angeles')).toBe(23 * 3_600_000);
    expect(localMidnight('2026-11-02', 'America/Los_Angeles') - localMidnight('2026-11-01', 'America/Los_Angeles')).toBe(25 * 3_600_000);
    expect(new Date(localMidnight('2026-03-29', 'Asia/Kolkata')).toISOString()).toBe('2026-03-28T18:30:00.000Z');
    expect(localMidnight('2026-03-29', 'UTC')).toBe(Date.UTC(2026, 2, 29));
    // America/Santiago springs forward at midnight: the day begins at 01:00 local.
    expect(localDate(localMidnight('2026-09-06', 'America/Santiago'), 'America/Santiago')).toBe('2026-09-06');
    expect(offsetAt(Date.UTC(2026, 6, 1), 'Europe/Berlin')).toBe(2 * 3_600_000);
    expect(offsetAt(Date.UTC(2026, 0, 1), 'Asia/Kolkata')).toBe(5.5 * 3_600_000);
  });

  it('takes the earlier instant of a repeated wall time, and the first instant past a skipped one', () => {
    // 2026-10-25 02:30 happens twice in Berlin (CEST, then CET); 2026-03-29 02:30 never.
    expect(new Date(zonedInstant(Date.UTC(2026, 9, 25, 2, 30), 'Europe/Berlin')).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(new Date(zonedInstant(Date.UTC(2026, 2, 29, 2, 30), 'Europe/Berlin')).toISOString()).toBe('2026-03-29T01:00:00.000Z');
  });
});

describe('ranges in a zone', () => {
  it('moves only the bounds sent as a date alone; UTC leaves the range as parsed', () => {
    const q = insightsBodySchema.parse({ from: '2026-03-29', to: '2026-03-30T12:00:00Z' });
    expect(q).toMatchObject({ from: Date.UTC(2026, 2, 29), to: Date.UTC(2026, 2, 30, 12), from_date: '2026-03-29' });
    expect(rangeInZone(q, 'UTC')).toBe(q);
    expect(rangeInZone(q, 'Europe/Berlin')).toMatchObject({ from: Date.UTC(2026, 2, 28, 23), to: Date.UTC(2026, 2, 30, 12) });
    // Applying it twice changes nothing: the bound is recomputed from the date.
    expect(rangeInZone(rangeInZone(q, 'Asia/Kolkata'), 'Asia/Kolkata')).toEqual(rangeInZone(q, 'Asia/Kolkata'));
  });

  it('/v1/stats takes tz as a query parameter, UTC when absent; an unknown zone is refused', () => {
    expect(statsParamsSchema.parse({ from: '2026-03-01', to: '2026-03-02' }).tz).toBeUndefined();
    expect(statsParamsSchema.parse({ from: '2026-03-01', to: '2026-03-02', tz: 'Europe/Berlin' })).toMatchObject({ tz: 'Europe/Berlin', from_date: '2026-03-01', to_date: '2026-03-02' });
    expect(statsParamsSchema.safeParse({ from: '2026-03-01', to: '2026-03-02', tz: 'Nowhere/Town' }).success).toBe(false);
  });
});
