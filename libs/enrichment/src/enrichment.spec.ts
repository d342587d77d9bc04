import { readdirSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { countryOf } from './geo';
import { toClickHouseTime } from '@analytics/schema';
import { createEnricher, defaultSessionId, derivedAnonymousId } from './enrich';
import { dailyAnonymousId, ipHash, normalizeIp } from './ip-hash';
import { parseUserAgent } from './user-agent';

const DAY = 86_400_000;
const T = Date.UTC(2026, 4, 10, 12, 0, 0);

describe('ip hash', () => {
  it('is 16 bytes (32 hex), stable within a UTC day, rotates the next day, and depends on the secret', () => {
    const h = ipHash('203.0.113.9', 's', T);
    expect(h).toMatch(/^[0-9a-f]{32}$/);
    expect(ipHash('203.0.113.9', 's', T + 3_600_000)).toBe(h);
    expect(ipHash('203.0.113.9', 's', T + DAY)).not.toBe(h);
    expect(ipHash('203.0.113.9', 't', T)).not.toBe(h);
    expect(ipHash('203.0.113.10', 's', T)).not.toBe(h);
    expect(ipHash('::ffff:203.0.113.9', 's', T)).toBe(h);
  });
  it('normalises v4-mapped v6 addresses', () => expect(normalizeIp('::ffff:10.0.0.1')).toBe('10.0.0.1'));
});

describe('daily anonymous id', () => {
  const IP = '203.0.113.9';
  const UA = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0.0.0';
  const id = dailyAnonymousId('p1', IP, UA, 's', T);

  it('is d_ + 32 hex of HMAC-SHA256(secret:YYYY-MM-DD, "anon\\0" + project + "\\0" + ip + "\\0" + ua), as docs/api/ingest.md documents', () => {
    const expected = createHmac('sha256', 's:2026-05-10').update(`anon\0p1\0${IP}\0${UA}`).digest('hex').slice(0, 32);
    expect(id).toBe(`d_${expected}`);
    expect(id.slice(2)).not.toBe(ipHash(IP, 's', T));
  });

  it.each<[string, boolean, string, string, string, string, number]>([
    ['later the same UTC day', true, 'p1', IP, UA, 's', T + 11 * 3_600_000],
    ['the same IPv4 seen through an IPv6 socket', true, 'p1', `::ffff:${IP}`, UA, 's', T],
    ['the next UTC day', false, 'p1', IP, UA, 's', T + DAY],
    ['another project', false, 'p2', IP, UA, 's', T],
    ['another IP', false, 'p1', '203.0.113.10', UA, 's', T],
    ['another user agent', false, 'p1', IP, `${UA} Edg/124`, 's', T],
    ['another secret', false, 'p1', IP, UA, 't', T],
  ])('%s -> same id: %s', (_name, same, project, ip, ua, secret, at) => {
    expect(dailyAnonymousId(project, ip, ua, secret, at) === id).toBe(same);
  });
});

describe('geo', () => {
  it.each([
    ['81.2.69.160', 'GB'],
    ['127.0.0.1', ''],
    ['10.1.2.3', ''],
    ['not-an-ip', ''],
    [undefined, ''],
  ])('maps %s to %j', (ip, country) => expect(countryOf(ip)).toBe(country));

  it('loads the country files only (14 MB, not the 146 MB of city data geoip-lite prefers when present)', () => {
    countryOf('81.2.69.160');
    const dir = (globalThis as { geodatadir?: string }).geodatadir!;
    expect(dir).toMatch(/analytics-geoip-country-[0-9a-f]{12}$/);
    expect(readdirSync(dir).sort()).toEqual(['geoip-country.dat', 'geoip-country6.dat']);
    expect(countryOf('2001:4860:4860::8888')).toBe('US'); // IPv6 through geoip-country6.dat
  });
});

describe('user agent', () => {
  it.each([
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1', 'mobile', 'Mobile Safari', 'iOS'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'desktop', 'Chrome', 'Windows'],
    ['Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1', 'tablet', 'Mobile Safari', 'iOS'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'desktop', 'Firefox', 'Linux'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36', 'mobile', 'Chrome', 'Android'],
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'bot', 'unknown', 'unknown'],
    ['curl/8.5.0', 'other', 'curl', 'unknown'],
    ['', 'other', 'unknown', 'unknown'],
    [undefined, 'other', 'unknown', 'unknown'],
  ])('parses %j', (ua, device_type, browser, os) => {
    const r = parseUserAgent(ua);
    expect(r.device_type).toBe(device_type);
    if (device_type !== 'bot') expect(r).toEqual({ device_type, browser, os });
  });
});

describe('enricher', () => {
  const ctx = { projectId: 'p', ip: '81.2.69.160', userAgent: 'curl/8', host: 'shop.example.com', nowMs: T, ipHashSecret: 's' };

  it('formats DateTime64(3) text and derives session ids from 30-minute buckets', () => {
    expect(toClickHouseTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6))).toBe('2026-01-02 03:04:05.006');
    expect(defaultSessionId('a', 1_800_000 * 7 + 1)).toBe('a-7');
  });

  it('defaults ids, timestamp and path; never carries the raw IP', () => {
    const row = createEnricher(ctx)({ event: 'x', url: 'https://shop.example.com/a/b?q=1' });
    expect(row.event_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.anonymous_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.timestamp).toBe('2026-05-10 12:00:00.000');
    expect(row.session_id).toBe(`${row.anonymous_id}-${Math.floor(T / 1_800_000)}`);
    expect(row.path).toBe('/a/b');
    expect(row.country).toBe('GB');
    expect(row.properties).toBe('{}');
    expect(JSON.stringify(row)).not.toContain('81.2.69.160');
  });

  it('does not invent an anonymous_id when user_id is sent, and buckets the session by user', () => {
    const row = createEnricher(ctx)({ event: 'x', user_id: 'u1', timestamp: T });
    expect(row.anonymous_id).toBe('');
    expect(row.session_id).toBe(`u1-${Math.floor(T / 1_800_000)}`);
  });

  it("'derived' requests give every event without ids the request's daily id, and sessions follow it", () => {
    const derived = { ...ctx, anonymousIds: 'derived' as const };
    const enrich = createEnricher(derived);
    const rows = [enrich({ event: 'a' }), enrich({ event: 'b', timestamp: T + 1_800_000 })];
    const id = dailyAnonymousId('p', '81.2.69.160', 'curl/8', 's', T);
    expect(derivedAnonymousId(derived)).toBe(id);
    expect(rows.map((r) => [r.anonymous_id, r.session_id])).toEqual([
      [id, `${id}-${Math.floor(T / 1_800_000)}`],
      [id, `${id}-${Math.floor(T / 1_800_000) + 1}`],
    ]);
    expect(enrich({ event: 'c', anonymous_id: 'client-id' }).anonymous_id).toBe('client-id');
    expect(enrich({ event: 'd', user_id: 'u1' }).anonymous_id).toBe('');
  });

  it("'random' requests (the default) get a fresh UUID per event and no daily id", () => {
    const enrich = createEnricher({ ...ctx, anonymousIds: 'random' });
    const [a, b] = [enrich({ event: 'a' }).anonymous_id, createEnricher(ctx)({ event: 'b' }).anonymous_id];
    expect([a, b]).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    expect(a).not.toBe(b);
    expect(derivedAnonymousId(ctx)).toBeUndefined();
  });

  it('classifies with the Host header when the event has no url', () => {
    expect(createEnricher(ctx)({ event: 'x', referrer: 'https://shop.example.com/prev' }).source).toBe('internal');
  });
});
