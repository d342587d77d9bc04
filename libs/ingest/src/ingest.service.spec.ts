import { dailyAnonymousId } from '@analytics/enrichment';
import { MemoryRateLimiter } from '@analytics/service-kit';
import { openTestStores } from '@analytics/testing';
import { IngestService } from './ingest.service';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
let stores: Stores;
beforeAll(async () => {
  stores = await openTestStores();
});
afterAll(() => stores.close());

const ctx = (projectId: string) => ({ projectId, ip: '203.0.113.5', userAgent: 'curl/8', host: 'x.example', nowMs: Date.UTC(2026, 5, 1), ipHashSecret: 's' });
const count = async (projectId: string) =>
  Number((await stores.events.select<{ n: string }>(`SELECT count() AS n FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID}`, { p: projectId }))[0]!.n);

describe('IngestService', () => {
  it('writes before resolving and returns the event id it stored', async () => {
    const svc = new IngestService({ store: stores.events, limiter: new MemoryRateLimiter() });
    const p = '11111111-1111-4111-8111-111111111111';
    const { event_id } = await svc.track(ctx(p), { event: 'x' });
    const [row] = await stores.events.select<{ event_id: string }>(`SELECT event_id FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID}`, { p });
    expect(row!.event_id).toBe(event_id);
  });

  it('limits track and batch per project with separate buckets; identify is unlimited', async () => {
    const svc = new IngestService({ store: stores.events, limiter: new MemoryRateLimiter(() => 0), rateRules: { track: { ratePerS: 1, burst: 2 }, batch: { ratePerS: 1, burst: 1 } } });
    const p = '22222222-2222-4222-8222-222222222222';
    await svc.track(ctx(p), { event: 'a' });
    await svc.track(ctx(p), { event: 'b' });
    await expect(svc.track(ctx(p), { event: 'c' })).rejects.toMatchObject({ code: 'rate_limited', extra: { retry_after_s: 1 } });
    await expect(svc.batch(ctx(p), [{ event: 'd' }, { event: 'e' }])).resolves.toEqual({ count: 2 });
    await expect(svc.batch(ctx(p), [{ event: 'f' }])).rejects.toMatchObject({ code: 'rate_limited' });
    for (let i = 0; i < 5; i++) await svc.identify(ctx(p), { anonymous_id: 'a', user_id: 'u' });
    // a rate-limited request writes nothing
    expect(await count(p)).toBe(2 + 2 + 5);
  });

  it("identify without anonymous_id binds the daily visitor id on a 'derived' request and is invalid_payload otherwise", async () => {
    const svc = new IngestService({ store: stores.events, limiter: new MemoryRateLimiter() });
    const p = '33333333-3333-4333-8333-333333333333';
    await svc.identify({ ...ctx(p), anonymousIds: 'derived' }, { user_id: 'u-1' });
    const rows = await stores.events.select<{ anonymous_id: string; user_id: string }>(`SELECT anonymous_id, user_id FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID}`, { p });
    expect(rows).toEqual([{ anonymous_id: dailyAnonymousId(p, '203.0.113.5', 'curl/8', 's', Date.UTC(2026, 5, 1)), user_id: 'u-1' }]);
    await expect(svc.identify(ctx(p), { user_id: 'u-2' })).rejects.toMatchObject({ code: 'invalid_payload', extra: { details: { fieldErrors: { anonymous_id: [expect.stringContaining('required')] } } } });
    expect(await count(p)).toBe(1);
  });
});
