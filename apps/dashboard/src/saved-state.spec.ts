import { type SavedFunnel, type SavedGoal, type SavedLists, type SavedSegment, NO_SAVED, byName, expiresAtOf, filtersToSave, funnelDefinition, funnelOfSaved, funnelToSave, goalBodyOf, nameOf, namesSaved, segmentOf, withKnownSaved } from './saved-state';
import { formatGoal, parseShownGoal, readState, withStep, withoutStep, writeState } from './state';

const NOW = Date.parse('2026-03-18T15:30:00Z');
const META = { created_at: '2026-03-01T00:00:00.000Z', updated_at: '2026-03-01T00:00:00.000Z' };
const GOAL_ID = '0b6f1c1e-8d1f-4c61-9a55-3a1f6f0e6a01';
const SIGNUP: SavedGoal = { id: GOAL_ID, name: 'Signed up', event: 'signup', ...META };
const PRO: SavedGoal = { id: 'g-pro', name: 'Pro pricing', path: '/pricing', filters: [['is', 'prop:plan', ['pro']]], ...META };
const CHECKOUT: SavedFunnel = { id: 'f-1', name: 'Checkout', steps: [{ event: '$pageview', path: '/pricing' }, { event: 'purchase', filters: [['is', 'prop:plan', ['pro']]] }], window_s: 3600, count_by: 'user', filters: [['is', 'channel', ['email']]], ...META };
const MOBILE: SavedSegment = { id: 's-1', name: 'mobile DE', filters: [['is', 'device_type', ['mobile']], ['is', 'country', ['DE']]], ...META };
const LISTS: SavedLists = { goals: [SIGNUP, PRO], funnels: [CHECKOUT], segments: [MOBILE] };

describe('saved goals, funnels and segments in the view state', () => {
  it('writes a saved goal as g=saved:<id>, a segment as seg= and a saved funnel as fid= beside its steps, and reads them back', () => {
    const base = readState('?from=2026-03-02&to=2026-03-16', NOW);
    const state = { ...base, goals: [{ id: GOAL_ID }, { event: 'signup' }], segment: 's-1', funnel: { ...funnelOfSaved(CHECKOUT, base.funnel) } };
    const search = writeState(state);
    expect(search).toBe(`?from=2026-03-02&to=2026-03-16&g=saved:${GOAL_ID}&g=signup&fs=$pageview@/pricing,purchase&fw=3600&fc=user&fid=f-1&seg=s-1`);
    expect(readState(search, NOW)).toEqual(state);
  });

  it('keeps a typed goal that looks like the saved form apart from a saved one (a typed ":" is %3A)', () => {
    expect(formatGoal({ event: 'saved:x' })).toBe('saved%3Ax');
    expect(parseShownGoal('saved%3Ax')).toEqual({ event: 'saved:x' });
    expect(parseShownGoal('saved:x%20y')).toEqual({ id: 'x y' });
    expect(parseShownGoal('saved:')).toBeUndefined();
    expect(parseShownGoal(`saved:${'a'.repeat(129)}`)).toBeUndefined();
    expect(parseShownGoal('saved:%E0%A4%A')).toBeUndefined();
  });

  it('ignores fid= without funnel steps and an empty or over-long seg=', () => {
    expect(readState('?fid=f-1', NOW).funnel.saved).toBeUndefined();
    expect(readState('?seg=', NOW).segment).toBeUndefined();
    expect(readState(`?seg=${'s'.repeat(129)}`, NOW).segment).toBeUndefined();
  });

  it('a changed step makes the funnel unsaved (its steps stay)', () => {
    const base = readState('', NOW);
    const opened = { ...base, funnel: funnelOfSaved(CHECKOUT, { ...base.funnel, breakdown: 'channel' }) };
    expect(opened.funnel).toEqual({ steps: [{ event: '$pageview', path: '/pricing' }, { event: 'purchase' }], window: 3600, countBy: 'user', breakdown: 'channel', saved: 'f-1' });
    expect(withStep(opened, { event: 'refund' }).funnel.saved).toBeUndefined();
    expect(withoutStep(opened, 1).funnel).toEqual({ steps: [{ event: '$pageview', path: '/pricing' }], window: 3600, countBy: 'user', breakdown: 'channel' });
  });

  it('asks a saved goal and an open saved funnel with their definitions as saved (their own conditions kept)', () => {
    expect(goalBodyOf({ id: GOAL_ID }, LISTS)).toEqual({ event: 'signup' });
    expect(goalBodyOf({ id: 'g-pro' }, LISTS)).toEqual({ path: '/pricing', filters: [['is', 'prop:plan', ['pro']]] });
    expect(goalBodyOf({ id: 'gone' }, LISTS)).toBeUndefined();
    expect(goalBodyOf({ event: 'signup', path: '/a' }, LISTS)).toEqual({ event: 'signup', path: '/a' });
    const base = readState('', NOW);
    const f = funnelOfSaved(CHECKOUT, base.funnel);
    expect(funnelDefinition(f, LISTS)).toEqual({ steps: CHECKOUT.steps, filters: CHECKOUT.filters });
    // Deleted meanwhile, or changed here: the steps as shown.
    expect(funnelDefinition(f, NO_SAVED)).toEqual({ steps: f.steps, filters: [] });
    expect(funnelToSave(f, LISTS)).toEqual({ steps: CHECKOUT.steps, window_s: 3600, count_by: 'user', filters: CHECKOUT.filters });
    expect(funnelToSave({ steps: [{ event: 'a' }, { path: '/b' }], window: 86_400, countBy: 'visitor' }, LISTS)).toEqual({ steps: [{ event: 'a' }, { path: '/b' }], window_s: 86_400, count_by: 'visitor' });
  });

  it('saves as a segment the applied segment\'s filters and the pills\', each once', () => {
    const state = { ...readState('?f=source:is:google&f=device_type:is:mobile', NOW), segment: 's-1' };
    expect(filtersToSave(state, LISTS)).toEqual([['is', 'device_type', ['mobile']], ['is', 'country', ['DE']], ['is', 'source', ['google']]]);
    expect(filtersToSave(readState('', NOW), LISTS)).toEqual([]);
    expect(segmentOf(state)).toEqual({ segment: 's-1' });
    expect(segmentOf(readState('', NOW))).toEqual({});
  });

  it('drops the saved ids the project no longer has, and keeps the very same state when all are known', () => {
    const state = readState(`?fs=a,b&fid=f-1&seg=s-1&g=saved:${GOAL_ID}&g=saved:gone&g=signup`, NOW);
    expect(withKnownSaved(state, { ...LISTS })).toEqual({ ...state, goals: [{ id: GOAL_ID }, { event: 'signup' }] });
    const known = readState(`?fs=a,b&fid=f-1&seg=s-1&g=saved:${GOAL_ID}`, NOW);
    expect(withKnownSaved(known, LISTS)).toBe(known);
    const none = withKnownSaved(known, NO_SAVED);
    expect([none.segment, none.funnel, none.goals]).toEqual([undefined, { steps: [{ event: 'a' }, { event: 'b' }], window: 86_400, countBy: 'visitor' }, []]);
    expect('segment' in none).toBe(false);
  });

  it('names: trimmed, 1 to 100 characters (the API\'s limit); lists by name, case aside', () => {
    expect(nameOf('  Checkout ')).toBe('Checkout');
    expect(nameOf('   ')).toBeUndefined();
    expect(nameOf('x'.repeat(100))).toBe('x'.repeat(100));
    expect(nameOf('x'.repeat(101))).toBeUndefined();
    expect(byName([{ name: 'b' }, { name: 'B' }, { name: 'a' }, { name: 'C' }]).map((x) => x.name)).toEqual(['a', 'B', 'b', 'C']);
  });

  it("a share link's last day (UTC, inclusive) is its expiry at the next midnight; a past or unreal day is refused", () => {
    expect(expiresAtOf('', NOW)).toBeUndefined();
    expect(expiresAtOf('2026-03-18', NOW)).toBe('2026-03-19T00:00:00.000Z');
    expect(expiresAtOf('2026-04-30', NOW)).toBe('2026-05-01T00:00:00.000Z');
    expect(expiresAtOf('2026-03-17', NOW)).toBeNull();
    expect(expiresAtOf('2026-02-30', NOW)).toBeNull();
  });
});

describe('a saved funnel whose steps name saved goals', () => {
  it('shows such a step as its goal and asks it as { id }', () => {
    const f: SavedFunnel = { id: 'f-2', name: 'Signup then pay', steps: [{ id: GOAL_ID }, { event: 'pay' }, { id: 'unlisted' }], ...META };
    const lists = { ...LISTS, funnels: [f] };
    const opened = funnelOfSaved(f, readState('', NOW).funnel, lists);
    expect(opened.steps).toEqual([{ event: 'signup' }, { event: 'pay' }, { id: 'unlisted' }]);
    expect(opened.window).toBe(86_400);
    expect(funnelDefinition(opened, lists).steps).toEqual([{ id: GOAL_ID }, { event: 'pay' }, { id: 'unlisted' }]);
    // Through the URL: an unlisted goal step stays a saved reference (fs=saved:<id>).
    expect(readState(writeState({ ...readState('', NOW), funnel: opened }), NOW).funnel.steps).toEqual(opened.steps);
  });
});

describe('when a view needs the saved lists before it asks anything', () => {
  it('only when it names a saved goal, funnel, step or segment', () => {
    expect(namesSaved(readState('?g=signup&fs=a,b&f=source:is:google', NOW))).toBe(false);
    expect(namesSaved(readState('?g=saved:x', NOW))).toBe(true);
    expect(namesSaved(readState('?fs=a,saved:x', NOW))).toBe(true);
    expect(namesSaved(readState('?fs=a,b&fid=f', NOW))).toBe(true);
    expect(namesSaved(readState('?seg=s', NOW))).toBe(true);
  });
});
