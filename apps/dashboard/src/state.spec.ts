import { compareLabel, knownTimeZone, wallMs, COUNT_STEPS, DAY_MS, type ViewState, conditionsOf, exportScopeOf, formatGoal, goalFilters, goalOf, parseGoal, withGoal, withStep, withoutGoal, withoutStep, eventOf, formatFilter, parseFilter, withFilter, withoutFilter, bucketStarts, bucketTicks, bucketValues, changePercent, dayTickLabel, flagOf, intervalFor, legendValue, parseDay, presetOf, presetRange, previousRange, readState, writeState } from './state';

const NOW = Date.parse('2026-03-18T15:30:00Z');
const day = (s: string) => Date.parse(`${s}T00:00:00Z`);
/** What readState gives for no goal, funnel or retention in the URL. */
const DEFAULTS = { goals: [], funnel: { steps: [], window: 86_400, countBy: 'visitor' }, retention: { period: 'week', countBy: 'user' } } as const satisfies Partial<ViewState>;
const plain = (s: Pick<ViewState, 'range' | 'filters' | 'compare'> & { prop?: string }): ViewState => ({ ...s, goals: [], funnel: { steps: [], window: 86_400, countBy: 'visitor' }, retention: { period: 'week', countBy: 'user' } });

describe('dashboard view state', () => {
  it.each([
    ['today', '2026-03-18', '2026-03-19'],
    ['yesterday', '2026-03-17', '2026-03-18'],
    ['7d', '2026-03-12', '2026-03-19'],
    ['30d', '2026-02-17', '2026-03-19'],
    ['month', '2026-03-01', '2026-03-19'],
    ['last-month', '2026-02-01', '2026-03-01'],
  ] as const)('preset %s is [%s, %s) in UTC days', (id, from, to) => {
    expect(presetRange(id, NOW)).toEqual({ from: day(from), to: day(to) });
    expect(presetOf({ from: day(from), to: day(to) }, NOW)).toBe(id);
  });

  it.each([
    // 2026-03-18T12:00Z is 2026-03-19 02:00 in Kiritimati (+14): its "Today" is already the 19th.
    ['Pacific/Kiritimati', '2026-03-18T12:00:00Z', 'today', '2026-03-19', '2026-03-20'],
    ['Pacific/Kiritimati', '2026-03-18T12:00:00Z', 'yesterday', '2026-03-18', '2026-03-19'],
    // 2026-03-18T20:00Z is 2026-03-19 01:30 in Kolkata (+05:30).
    ['Asia/Kolkata', '2026-03-18T20:00:00Z', 'today', '2026-03-19', '2026-03-20'],
    ['Asia/Kolkata', '2026-03-18T18:29:59Z', 'today', '2026-03-18', '2026-03-19'],
    ['Asia/Kolkata', '2026-04-02T19:00:00Z', 'month', '2026-04-01', '2026-04-04'],
    ['Asia/Kolkata', '2026-03-31T19:00:00Z', 'last-month', '2026-03-01', '2026-04-01'],
    // 2026-03-01T05:00Z is still Feb 28 in Los Angeles.
    ['America/Los_Angeles', '2026-03-01T05:00:00Z', '7d', '2026-02-22', '2026-03-01'],
    ['UTC', '2026-03-18T23:59:59Z', 'today', '2026-03-18', '2026-03-19'],
  ] as const)('in %s at %s, preset %s is the local days [%s, %s)', (zone, at, id, from, to) => {
    expect(presetRange(id, Date.parse(at), zone)).toEqual({ from: day(from), to: day(to) });
    expect(presetOf({ from: day(from), to: day(to) }, Date.parse(at), zone)).toBe(id);
    expect(readState('', Date.parse(at), zone).range).toEqual(presetRange('7d', Date.parse(at), zone));
  });

  it('wall clock of an instant in a zone, across a DST change; unknown zone names fall back to UTC', () => {
    expect(new Date(wallMs(Date.parse('2026-03-29T00:59:59Z'), 'Europe/Berlin')).toISOString()).toBe('2026-03-29T01:59:59.000Z');
    expect(new Date(wallMs(Date.parse('2026-03-29T01:00:00Z'), 'Europe/Berlin')).toISOString()).toBe('2026-03-29T03:00:00.000Z');
    expect(new Date(wallMs(Date.parse('2026-03-18T20:00:00.250Z'), 'Asia/Kolkata')).toISOString()).toBe('2026-03-19T01:30:00.250Z');
    expect(knownTimeZone('Mars/Olympus')).toBe('UTC');
    expect(knownTimeZone(undefined)).toBe('UTC');
    expect(knownTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
  });

  it('says what the change compares with: the like-for-like range the API names while the range includes now', () => {
    const now = Date.parse('2026-03-18T08:35:00Z'); // 14:05 in Kolkata
    const today = presetRange('today', now, 'Asia/Kolkata');
    expect(compareLabel(today, now, 'Asia/Kolkata', { from: '2026-03-16T18:30:00.000Z', to: '2026-03-17T08:35:00.000Z' })).toBe('vs yesterday until 14:05');
    const week = presetRange('7d', now, 'Asia/Kolkata');
    expect(compareLabel(week, now, 'Asia/Kolkata', { from: '2026-03-04T18:30:00.000Z', to: '2026-03-11T08:35:00.000Z' })).toBe('vs the previous 7 days until Mar 11, 14:05');
    // A range that has ended, or an answer without compare_range: the whole previous period.
    expect(compareLabel(presetRange('yesterday', now, 'Asia/Kolkata'), now, 'Asia/Kolkata', { from: '2026-03-15T18:30:00.000Z', to: '2026-03-16T18:30:00.000Z' })).toBe('vs previous period');
    expect(compareLabel(today, now, 'Asia/Kolkata')).toBe('vs previous period');
  });

  it('reads an old event= link as an event_name filter, and writes filters as f=<dimension>:is:<value>', () => {
    const state = readState('?from=2026-03-02&to=2026-03-16&event=signup', NOW);
    expect(state).toEqual({ range: { from: day('2026-03-02'), to: day('2026-03-16') }, filters: [{ dimension: 'event_name', value: 'signup' }], compare: false, ...DEFAULTS });
    expect(writeState(state)).toBe('?from=2026-03-02&to=2026-03-16&f=event_name:is:signup');
    expect(writeState({ ...state, filters: [{ dimension: 'event_name', value: '$pageview' }] })).toBe('?from=2026-03-02&to=2026-03-16&f=event_name:is:%24pageview');
  });

  it('round-trips filters whose values and property keys hold the separator, spaces, & and non-ASCII, in order, with compare and prop', () => {
    const filters = [
      { dimension: 'source', value: 'google' },
      { dimension: 'path', value: '/a:b c&d=e?f#g' },
      { dimension: 'prop:plan:tier', value: 'pro:€ 100%' },
      { dimension: 'prop:x', value: '' },
    ];
    const state = plain({ range: { from: day('2026-03-02'), to: day('2026-03-16') }, filters, compare: true, prop: 'a b&c' });
    const search = writeState(state);
    expect(search).toBe('?from=2026-03-02&to=2026-03-16&f=source:is:google&f=path:is:%2Fa%3Ab%20c%26d%3De%3Ff%23g&f=prop:plan%3Atier:is:pro%3A%E2%82%AC%20100%25&f=prop:x:is:&compare=1&prop=a%20b%26c');
    expect(readState(search, NOW)).toEqual(state);
    expect(parseFilter(formatFilter(filters[2]!))).toEqual(filters[2]);
  });

  it('a merged source row is one filter of several values (is any of them): f=source:is:<a>:<b>, read back, sent as one condition', () => {
    const merged = { dimension: 'source', value: 'news-ycombinator-com', more: ['news.ycombinator.com', 'a:b'] };
    const state = plain({ range: { from: day('2026-03-02'), to: day('2026-03-16') }, filters: [merged], compare: false });
    const search = writeState(state);
    expect(search).toBe('?from=2026-03-02&to=2026-03-16&f=source:is:news-ycombinator-com:news.ycombinator.com:a%3Ab');
    expect(readState(search, NOW).filters).toEqual([merged]);
    expect(conditionsOf([merged])).toEqual([['is', 'source', ['news-ycombinator-com', 'news.ycombinator.com', 'a:b']]]);
    // More than the API's 100 values: not a filter.
    expect(parseFilter(`source:is:${Array.from({ length: 101 }, (_, i) => `s${i}`).join(':')}`)).toBeUndefined();
  });

  it('ignores malformed f= values, keeps one filter per dimension (the last), and adds and removes filters', () => {
    const state = readState(`?from=2026-03-02&to=2026-03-16&f=source:is:a&f=source:is:b&f=nope&f=path:is_not:x&f=Bad-Dim:is:x&f=nosuch:is:x&f=prop::is:x&f=path:is:%E0%A4%A&f=path:is:${'a'.repeat(1025)}&f=prop:${'k'.repeat(257)}:is:x`, NOW);
    expect(state.filters).toEqual([{ dimension: 'source', value: 'b' }]);
    const more = withFilter(state, { dimension: 'country', value: 'DE' });
    expect(more.filters).toEqual([{ dimension: 'source', value: 'b' }, { dimension: 'country', value: 'DE' }]);
    expect(withoutFilter(more, 'source').filters).toEqual([{ dimension: 'country', value: 'DE' }]);
    expect(conditionsOf(more.filters)).toEqual([['is', 'source', ['b']], ['is', 'country', ['DE']]]);
    expect(eventOf(withFilter(more, { dimension: 'event_name', value: 'signup' }))).toBe('signup');
  });

  it.each(['', '?from=2026-03-10', '?from=2026-03-10&to=2026-03-10', '?from=2026-02-30&to=2026-03-02', '?from=yesterday&to=today'])(
    'falls back to the last 7 days for %j',
    (search) => {
      expect(readState(search, NOW)).toEqual({ range: presetRange('7d', NOW), filters: [], compare: false, ...DEFAULTS });
    },
  );

  it('writes goals as g=<event>@<path> and a funnel as fs=<step>,<step>, keeping / $ * readable, and reads them back with the view and its options', () => {
    const base = readState('?from=2026-03-02&to=2026-03-16', NOW);
    let state = withGoal(withGoal(withGoal(base, { event: 'signup' }), { event: '$pageview', path: '/pricing' }), { path: '/blog/*' });
    state = withStep(withStep(withStep(state, { event: '$pageview', path: '/pricing' }), { event: 'signup' }), { event: 'purchase' });
    state = { ...state, funnel: { ...state.funnel, window: 3600, countBy: 'user', breakdown: 'channel' }, retention: { period: 'month', countBy: 'visitor' }, view: 'funnel' };
    const search = writeState(state);
    expect(search).toBe('?from=2026-03-02&to=2026-03-16&g=signup&g=$pageview@/pricing&g=@/blog/*&fs=$pageview@/pricing,signup,purchase&fw=3600&fc=user&fb=channel&rp=month&rc=visitor&view=funnel');
    expect(readState(search, NOW)).toEqual(state);
    // Defaults are not written; removing a goal or a step keeps the others in order.
    expect(writeState({ ...base, view: 'retention' })).toBe('?from=2026-03-02&to=2026-03-16&view=retention');
    expect(withoutGoal(state, 1).goals).toEqual([{ event: 'signup' }, { path: '/blog/*' }]);
    expect(withoutStep(state, 0).funnel.steps).toEqual([{ event: 'signup' }, { event: 'purchase' }]);
  });

  it('round-trips goals whose parts hold the separators (@ , & =), spaces and non-ASCII', () => {
    const goals = [{ event: 'a@b,c', path: '/x y/&z=1?€' }, { event: 'plan:pro' }, { path: '/@home' }];
    for (const g of goals) expect(parseGoal(formatGoal(g))).toEqual(g);
    const state = { ...plain({ range: { from: day('2026-03-02'), to: day('2026-03-16') }, filters: [], compare: false }), goals };
    state.funnel = { ...state.funnel, steps: [goals[0]!, goals[2]!] };
    expect(readState(writeState(state), NOW)).toEqual(state);
  });

  it('ignores goals and funnels that do not parse, over the limits or with bad options; a goal is added once', () => {
    const state = readState(`?from=2026-03-02&to=2026-03-16&g=&g=@&g=a@b@c&g=%E0%A4%A&g=@*&g=${'e'.repeat(129)}&g=ok&g=ok&fs=a,@&fw=0&fc=robot&fb=time:day&rp=year&rc=session&view=chart`, NOW);
    expect(state).toEqual({ ...plain({ range: { from: day('2026-03-02'), to: day('2026-03-16') }, filters: [], compare: false }), goals: [{ event: 'ok' }] });
    expect(readState(`?fs=${Array.from({ length: 11 }, (_, i) => `e${i}`).join(',')}`, NOW).funnel.steps).toEqual([]);
    expect(goalOf('  ', '')).toBeUndefined();
    expect(goalOf(' signup ', ' /pricing ')).toEqual({ event: 'signup', path: '/pricing' });
  });

  it('turns a goal into the filters of the events completing it, none for a page prefix', () => {
    expect(goalFilters({ event: 'signup', path: '/pricing' })).toEqual([{ dimension: 'event_name', value: 'signup' }, { dimension: 'path', value: '/pricing' }]);
    expect(goalFilters({ path: '/blog/*' })).toBeUndefined();
  });

  it('rejects days that are not calendar days', () => {
    expect(parseDay('2026-02-29')).toBeUndefined();
    expect(parseDay('2026-3-01')).toBeUndefined();
    expect(parseDay('2028-02-29')).toBe(day('2028-02-29'));
  });

  it('compares with the period of the same length just before', () => {
    expect(previousRange({ from: day('2026-03-12'), to: day('2026-03-19') })).toEqual({ from: day('2026-03-05'), to: day('2026-03-12') });
  });

  it('buckets by hour up to 2 days, by day up to 90, by week beyond', () => {
    expect(intervalFor({ from: day('2026-03-17'), to: day('2026-03-19') })).toBe('hour');
    expect(intervalFor({ from: day('2026-03-16'), to: day('2026-03-19') })).toBe('day');
    expect(intervalFor({ from: day('2025-12-19'), to: day('2026-03-19') })).toBe('day');
    expect(intervalFor({ from: day('2025-12-18'), to: day('2026-03-19') })).toBe('week');
  });

  it('lists every bucket of the range, weeks from the Monday on or before the start', () => {
    expect(bucketStarts({ from: day('2026-03-18'), to: day('2026-03-19') }, 'hour')).toHaveLength(24);
    expect(bucketStarts({ from: day('2026-03-12'), to: day('2026-03-19') }, 'day')).toEqual(Array.from({ length: 7 }, (_, i) => day('2026-03-12') + i * DAY_MS));
    // 2026-03-18 is a Wednesday: its week starts on Monday 2026-03-16.
    expect(bucketStarts({ from: day('2026-03-18'), to: day('2026-04-01') }, 'week')).toEqual([day('2026-03-16'), day('2026-03-23'), day('2026-03-30')]);
  });

  it('gives no change figure when the previous period had nothing', () => {
    expect(changePercent(10, 0)).toBeUndefined();
    expect(changePercent(15, 10)).toBe(50);
    expect(changePercent(5, 10)).toBe(-50);
  });

  it('draws flags from the ISO code, none for an unknown country', () => {
    expect(flagOf('FR')).toBe('🇫🇷');
    expect(flagOf('')).toBe('');
    expect(flagOf('ZZZ')).toBe('');
  });

  it('steps count ticks by whole numbers only', () => {
    expect(COUNT_STEPS.slice(0, 6)).toEqual([1, 2, 5, 10, 20, 50]);
    expect(COUNT_STEPS.every((step) => Number.isInteger(step))).toBe(true);
  });

  it('ticks a daily chart at bucket starts labelled by day, thinning them only when the labels would not fit', () => {
    const week = bucketStarts(presetRange('7d', NOW), 'day');
    expect(bucketTicks(week, 800)).toEqual(week);
    expect(week.map(dayTickLabel)).toEqual(['Mar 12', 'Mar 13', 'Mar 14', 'Mar 15', 'Mar 16', 'Mar 17', 'Mar 18']);
    const month = bucketStarts(presetRange('30d', NOW), 'day');
    expect(bucketTicks(month, 320)).toEqual([0, 6, 12, 18, 24].map((i) => month[i]));
  });

  it('charts an empty bucket as 0 and a bucket still to come as nothing', () => {
    const today = bucketStarts(presetRange('today', NOW), 'hour');
    const values = bucketValues(today, [{ bucket: '2026-03-18 09:00:00', value: '3' }, { bucket: '2026-03-18 15:00:00', value: 1 }], NOW);
    expect(values.slice(8, 17)).toEqual([0, 3, 0, 0, 0, 0, 0, 1, null]);
    expect(values.filter((v) => v === null)).toHaveLength(8);
    expect(bucketValues(bucketStarts(presetRange('7d', NOW), 'day'), [{ bucket: '2026-03-18 00:00:00', value: 5 }], NOW)).toEqual([0, 0, 0, 0, 0, 0, 5]);
  });

  it("shows the range's total in the legend until a bucket is hovered", () => {
    expect(legendValue(null, false, 1234)).toBe('1,234 in range');
    expect(legendValue(7, true, 1234)).toBe('7');
    expect(legendValue(null, true, 1234)).toBe('–');
  });
});

describe('what the Export button applies', () => {
  it('applies the event filter and names every other filter as not applied (the export has the range and event only)', () => {
    expect(exportScopeOf([])).toEqual({ applied: [], skipped: [] });
    const filters = [
      { dimension: 'source', value: 'google' },
      { dimension: 'event_name', value: 'signup' },
      { dimension: 'prop:plan', value: 'pro' },
    ];
    expect(exportScopeOf(filters)).toEqual({ event: 'signup', applied: [filters[1]], skipped: [filters[0], filters[2]] });
  });
});
