import request from 'supertest';
import { type SavedKind, funnelBodySchema, insightsBodySchema, retentionBodySchema, savedDefinitionSchemas } from '@analytics/schema';
import { expectedFunnel, expectedRetention } from './test-support/expected-conversions';
import { expectedInsights, holds, visitsOf } from './test-support/expected-insights';
import { D0, DAY_MS, HOUR_MS } from './test-support/seeded-dataset';
import { seededSuite } from './test-support/seeded-service';

// Saved goals, funnels and segments named by id in the reads (docs/saved-and-shared.md): each read with ids answers
// what the same read with the definitions inline answers, and both equal the plain TypeScript answers the correctness
// specs compute (test-support/expected-*.ts). A segment's conditions hold beside the request's own filters.

const SEED = 20261128;
const PROJECTS = { alpha: { visitors: 200 }, beta: { visitors: 40 } } as const;
type Name = keyof typeof PROJECTS;

const seeded = seededSuite(PROJECTS, SEED);

const iso = (ms: number) => new Date(ms).toISOString();
const send = (path: string, name: Name, body: Record<string, unknown>) => request(seeded.readApp).post(path).set('authorization', `Bearer ${seeded.rk[name]}`).send(body);
const post = async (path: string, name: Name, body: Record<string, unknown>) => {
  const res = await send(path, name, body);
  expect({ status: res.status, body, error: res.body.error, details: res.body.details }).toMatchObject({ status: 200 });
  return res.body;
};
/** Saves a definition as the admin route does (checked and in its stored form); its id. */
const save = async (name: Name, kind: SavedKind, definition: Record<string, unknown>) => {
  const stored = savedDefinitionSchemas[kind].parse(definition) as unknown as Record<string, unknown>;
  return (await seeded.stores.keyStore.saved.create(seeded.ids[name], kind, { name: `${kind} ${Math.random()}`, definition: stored }))!.id;
};

const RANGES: Array<[number, number]> = [
  [D0, D0 + 14 * DAY_MS],
  [D0 + DAY_MS + 6 * HOUR_MS, D0 + 10 * DAY_MS + 18 * HOUR_MS + 1234],
];
const GOALS = [
  { event: 'signup' },
  { path: '/blog/*' },
  { event: '$pageview', path: '/pricing', filters: [['is_not', 'country', ['US']]] },
  { event: 'purchase', filters: [['is', 'channel', ['organic_search', 'paid_search', 'direct']]] },
];
const SEGMENTS = [
  [['is_not', 'country', ['GB']]],
  [['is', 'source', ['google', 'facebook', 'direct']]],
  [['or', [['contains', 'browser', ['Chrome']], ['is', 'device_type', ['mobile']]]]],
  [['contains', 'entry_path', ['/']], ['is', 'event_name', ['$pageview', 'signup', 'purchase']]],
];
const OWN_FILTERS = [[], [['is_not', 'device_type', ['tablet']]]];

describe('POST /v1/insights with a saved goal and segment', () => {
  it.each(['alpha', 'beta'] as const)('for %s: equals the inline read and the TypeScript answer', async (name) => {
    let i = 0;
    for (const [g, goal] of GOALS.entries()) {
      for (const [s, segment] of SEGMENTS.entries()) {
        const [from, to] = RANGES[i % RANGES.length]!;
        const own = OWN_FILTERS[i++ % OWN_FILTERS.length]!;
        const base = { from: iso(from), to: iso(to), metrics: ['visitors', 'visits', 'conversions', 'conversion_rate'], dimensions: [['country'], ['source'], [], ['entry_path']][(g + s) % 4] };
        const inline = { ...base, goal, filters: [...own, ...segment] };
        const byId = { ...base, goal: { id: await save(name, 'goal', goal) }, segment: await save(name, 'segment', { filters: segment }), filters: own };
        const answer = await post('/v1/insights', name, byId);
        expect(answer).toEqual(await post('/v1/insights', name, inline));
        expect(answer).toEqual(expectedInsights(seeded.rows, seeded.ids[name], insightsBodySchema.parse(inline)));
      }
    }
  });

  it('a segment narrows the read: its conditions and the request\'s all hold', async () => {
    const segment = await save('alpha', 'segment', { filters: [['is', 'country', ['FR']]] });
    const body = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), metrics: ['events'], dimensions: ['country', 'device_type'] };
    const rows = (await post('/v1/insights', 'alpha', { ...body, segment, filters: [['is', 'device_type', ['mobile']]] })).rows;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect([row.country, row.device_type]).toEqual(['FR', 'mobile']);
  });
});

describe('POST /v1/funnel with a saved funnel, saved goals as steps, and a segment', () => {
  const FUNNELS = [
    { steps: [{ event: '$pageview' }, { event: 'signup' }], window_s: 86_400, count_by: 'visitor' },
    { steps: [{ event: '$pageview', path: '/pricing' }, { event: 'clicked_pricing' }, { event: 'signup' }, { event: 'purchase' }], window_s: 3_600, count_by: 'user', filters: [['is_not', 'country', ['US']]] },
    { steps: [{ path: '/blog/*' }, { event: 'signup' }, { event: 'purchase' }], window_s: 2_592_000, count_by: 'session' },
  ] as const;

  it.each(['alpha', 'beta'] as const)('for %s: { id, from, to, breakdown?, segment? } equals the inline funnel and the TypeScript answer', async (name) => {
    let i = 0;
    for (const funnel of FUNNELS) {
      for (const segment of [undefined, ...SEGMENTS]) {
        const [from, to] = RANGES[i % RANGES.length]!;
        const own = OWN_FILTERS[i % OWN_FILTERS.length]!;
        const breakdown = [undefined, 'country', 'source'][i++ % 3];
        const range = { from: iso(from), to: iso(to), ...(breakdown ? { breakdown } : {}) };
        const inline = { ...range, ...funnel, filters: [...('filters' in funnel ? funnel.filters : []), ...own, ...(segment ?? [])] };
        const byId = { ...range, id: await save(name, 'funnel', funnel), filters: own, ...(segment ? { segment: await save(name, 'segment', { filters: segment }) } : {}) };
        const answer = await post('/v1/funnel', name, byId);
        expect(answer).toEqual(await post('/v1/funnel', name, inline));
        expect(answer).toEqual(expectedFunnel(seeded.rows, seeded.ids[name], funnelBodySchema.parse(inline)));
      }
    }
  });

  it('takes saved goals as steps, beside inline ones', async () => {
    const body = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), count_by: 'visitor' };
    const steps = [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }, { event: 'purchase' }];
    const mixed = [{ id: await save('alpha', 'goal', steps[0]!) }, steps[1], { id: await save('alpha', 'goal', steps[2]!) }];
    const answer = await post('/v1/funnel', 'alpha', { ...body, steps: mixed });
    expect(answer).toEqual(expectedFunnel(seeded.rows, seeded.ids.alpha, funnelBodySchema.parse({ ...body, steps })));
    expect(answer.steps[0].count).toBeGreaterThan(0);
  });
});

describe('POST /v1/retention with saved goals and a segment', () => {
  it.each(['alpha', 'beta'] as const)('for %s: equals the inline read and the TypeScript answer', async (name) => {
    let i = 0;
    for (const [start, ret] of [[GOALS[0], undefined], [GOALS[1], GOALS[0]], [undefined, GOALS[3]]] as const) {
      for (const segment of [undefined, SEGMENTS[0], SEGMENTS[3]]) {
        const period = (['day', 'week'] as const)[i % 2];
        const count_by = (['visitor', 'user'] as const)[i++ % 2];
        const base = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), period, count_by };
        const inline = { ...base, ...(start ? { start } : {}), ...(ret ? { return: ret } : {}), filters: segment ?? [] };
        const byId = {
          ...base,
          ...(start ? { start: { id: await save(name, 'goal', start) } } : {}),
          ...(ret ? { return: { id: await save(name, 'goal', ret) } } : {}),
          ...(segment ? { segment: await save(name, 'segment', { filters: segment }) } : {}),
        };
        const answer = await post('/v1/retention', name, byId);
        expect(answer).toEqual(await post('/v1/retention', name, inline));
        expect(answer).toEqual(expectedRetention(seeded.rows, seeded.ids[name], retentionBodySchema.parse(inline)));
      }
    }
  });
});

describe('ids the project does not have', () => {
  const range = { from: iso(D0), to: iso(D0 + DAY_MS) };
  const UNKNOWN = '00000000-0000-4000-8000-000000000000';

  it('answer 400 invalid_payload naming the field: unknown, another project\'s, or of another kind', async () => {
    const betaGoal = await save('beta', 'goal', { event: 'signup' });
    const alphaSegment = await save('alpha', 'segment', { filters: [['is', 'country', ['FR']]] });
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['/v1/insights', { ...range, metrics: ['conversions'], goal: { id: UNKNOWN } }, 'goal.id'],
      ['/v1/insights', { ...range, metrics: ['conversions'], goal: { id: betaGoal } }, 'goal.id'],
      ['/v1/insights', { ...range, metrics: ['conversions'], goal: { id: alphaSegment } }, 'goal.id'],
      ['/v1/insights', { ...range, segment: 'not-a-uuid' }, 'segment'],
      ['/v1/funnel', { ...range, id: UNKNOWN }, 'id'],
      ['/v1/funnel', { ...range, steps: [{ event: 'a' }, { id: betaGoal }] }, 'steps.1.id'],
      ['/v1/funnel', { ...range, steps: [{ event: 'a' }, { event: 'b' }], segment: UNKNOWN }, 'segment'],
      ['/v1/retention', { ...range, period: 'day', start: { id: betaGoal } }, 'start.id'],
      ['/v1/retention', { ...range, period: 'day', segment: UNKNOWN }, 'segment'],
    ];
    for (const [path, body, field] of cases) {
      const res = await send(path, 'alpha', body);
      expect({ path, body, status: res.status, error: res.body.error }).toEqual({ path, body, status: 400, error: 'invalid_payload' });
      expect(res.body.details.issues.map((x: { path: string }) => x.path)).toEqual([field]);
    }
  });

  it('a goal reference takes nothing beside its id; a saved funnel brings its steps, window_s and count_by', async () => {
    const both = await send('/v1/insights', 'alpha', { ...range, metrics: ['conversions'], goal: { id: UNKNOWN, event: 'x' } });
    expect(both.status).toBe(400);
    expect(both.body.details.issues[0]).toMatchObject({ path: 'goal' });
    const funnel = await save('alpha', 'funnel', { steps: [{ event: 'a' }, { event: 'b' }] });
    for (const extra of [{ steps: [{ event: 'a' }, { event: 'b' }] }, { window_s: 60 }, { count_by: 'user' }]) {
      const res = await send('/v1/funnel', 'alpha', { ...range, id: funnel, ...extra });
      expect(res.status).toBe(400);
      expect(res.body.details.issues[0].path).toBe(Object.keys(extra)[0]);
    }
    const neither = await send('/v1/funnel', 'alpha', range);
    expect(neither.status).toBe(400);
    expect(neither.body.details.issues[0]).toEqual({ path: 'steps', message: 'a funnel takes `steps`, or `id` of a saved funnel' });
  });
});

describe('GET /v1/goals, /v1/funnels, /v1/segments', () => {
  it('list the key\'s project\'s own, for an rk_ key only', async () => {
    const goal = await save('beta', 'goal', { event: 'only-beta' });
    const list = await request(seeded.readApp).get('/v1/goals').set('authorization', `Bearer ${seeded.rk.beta}`);
    expect(list.status).toBe(200);
    expect(list.body.goals).toContainEqual(expect.objectContaining({ id: goal, event: 'only-beta', filters: [] }));
    const alpha = await request(seeded.readApp).get('/v1/goals').set('authorization', `Bearer ${seeded.rk.alpha}`);
    expect(alpha.body.goals.map((g: { id: string }) => g.id)).not.toContain(goal);
    for (const path of ['/v1/funnels', '/v1/segments']) expect((await request(seeded.readApp).get(path).set('authorization', `Bearer ${seeded.rk.beta}`)).status).toBe(200);
    const { keys } = await seeded.stores.keyStore.createProject({ name: 'no reads' });
    const sk = await request(seeded.readApp).get('/v1/segments').set('authorization', `Bearer ${keys.sk}`);
    expect([sk.status, sk.body.error]).toEqual([403, 'insufficient_scope']);
  });
});

describe('GET /v1/export with a segment', () => {
  const exportIds = async (name: Name, query: Record<string, string>) => {
    const res = await request(seeded.readApp).get('/v1/export').query(query).set('authorization', `Bearer ${seeded.rk[name]}`);
    expect(res.status).toBe(200);
    return res.text.split('\n').filter(Boolean).map((line) => JSON.parse(line).event_id as string);
  };

  it.each(SEGMENTS.map((s, i) => [i, s] as const))('keeps exactly the events segment %s holds for (a visit dimension: its visit\'s value), in order', async (_i, filters) => {
    const [from, to] = RANGES[1]!;
    const segment = await save('alpha', 'segment', { filters });
    const got = await exportIds('alpha', { from: iso(from), to: iso(to), segment });
    const conditions = insightsBodySchema.parse({ from: iso(from), to: iso(to), filters }).filters;
    const expected = visitsOf(seeded.rows, seeded.ids.alpha, from, to, true).flatMap((v) => v.events.filter((e) => conditions.every((c) => holds(c, e, v))).map((e) => e.event_id));
    expect(got.length).toBeGreaterThan(0);
    expect([...got].sort()).toEqual([...expected].sort());
    const all = await exportIds('alpha', { from: iso(from), to: iso(to) });
    expect(got.length).toBeLessThan(all.length);
    // The export's order (timestamp, event_id) is kept: the segment's events in the order of the whole export.
    const kept = new Set(got);
    expect(got).toEqual(all.filter((id) => kept.has(id)));
  });

  it('an unknown segment is 400 invalid_params, before any byte of a file', async () => {
    const res = await request(seeded.readApp).get('/v1/export').query({ from: iso(D0), to: iso(D0 + DAY_MS), segment: '00000000-0000-4000-8000-000000000000' }).set('authorization', `Bearer ${seeded.rk.alpha}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_params');
    expect(res.body.details.issues[0].path).toBe('segment');
  });
});
