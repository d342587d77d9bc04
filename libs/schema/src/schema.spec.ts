import fc from 'fast-check';
import { ApiError, ERROR_STATUS, LIMITS, batchInputSchema, eventInputSchema, propertiesJson, forgetInputSchema, identifyInputSchema, parseIsoDate, parseOrThrow, pathPattern, queryParamsSchema, routeOf, routes, statsParamsSchema, sourcesParamsSchema } from './index';

describe('event input', () => {
  const ok = (body: unknown) => eventInputSchema.safeParse(body).success;

  it.each([
    ['minimal', { event: 'signup' }],
    ['128-char name', { event: 'e'.repeat(128) }],
    ['all fields', { event: '$pageview', event_id: 'x', timestamp: '2026-01-02T03:04:05.678Z', anonymous_id: 'a', user_id: 'u'.repeat(256), session_id: 's', url: 'https://a.example/?utm_source=x', path: '/p', referrer: 'https://r.example/', properties: { a: 1 } }],
    ['nulls as absent', { event: 'x', user_id: null, url: null, properties: null }],
    ['empty referrer', { event: 'x', referrer: '' }],
    ['properties of exactly 8192 bytes', { event: 'x', properties: { k: 'v'.repeat(8192 - 8) } }],
  ])('accepts %s', (_name, body) => expect(ok(body)).toBe(true));

  it.each([
    ['missing event', {}],
    ['empty event', { event: '' }],
    ['129-char event', { event: 'e'.repeat(129) }],
    ['numeric event', { event: 42 }],
    ['257-char user_id', { event: 'x', user_id: 'u'.repeat(257) }],
    ['129-char anonymous_id', { event: 'x', anonymous_id: 'a'.repeat(129) }],
    ['malformed url', { event: 'x', url: 'not a url' }],
    ['2049-char url', { event: 'x', url: 'https://a.example/' + 'p'.repeat(2040) }],
    ['2049-char path', { event: 'x', path: 'p'.repeat(2049) }],
    ['properties over 8 KB', { event: 'x', properties: { k: 'v'.repeat(8192) } }],
    ['properties as array', { event: 'x', properties: [1, 2] }],
    ['properties as string', { event: 'x', properties: '{}' }],
    ['bad timestamp', { event: 'x', timestamp: 'yesterday' }],
    ['impossible date', { event: 'x', timestamp: '2026-02-31T00:00:00Z' }],
    ['not an object', 'event'],
  ])('rejects %s', (_name, body) => expect(ok(body)).toBe(false));

  it('rejects properties nested deeper than 1000 levels instead of overflowing the stack, and accepts 1000', () => {
    const nest = (depth: number) => {
      let v: unknown = 1;
      for (let i = 1; i < depth; i++) v = { a: v };
      return v as Record<string, unknown>;
    };
    const deep = eventInputSchema.safeParse({ event: 'x', properties: nest(100_000) });
    expect(deep.success).toBe(false);
    expect(deep.error!.issues[0]!.message).toMatch(/1000 levels/);
    expect(identifyInputSchema.safeParse({ anonymous_id: 'a', user_id: 'u', traits: JSON.parse(`{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}`) }).success).toBe(false);
    expect(eventInputSchema.safeParse({ event: 'x', properties: nest(1000) }).success).toBe(true);
  });
  it('turns lone surrogates (JSON "\\ud800" escapes) into U+FFFD in every text field, keeping pairs', () => {
    const parsed = eventInputSchema.parse(JSON.parse('{"event":"a\\ud800","event_id":"\\udc00b","user_id":"u\\ud83d\\ude00","url":"https://a.example/\\ud800","referrer":"\\udbff","path":"/\\ud800\\ud800"}'));
    expect(parsed).toMatchObject({ event: 'a\uFFFD', event_id: '\uFFFDb', user_id: 'u\u{1F600}', url: 'https://a.example/\uFFFD', referrer: '\uFFFD', path: '/\uFFFD\uFFFD' });
    expect(queryParamsSchema.parse({ from: '2026-01-01', to: '2026-02-01', user_id: 'x\uD800' }).user_id).toBe('x\uFFFD');
  });
  it('hands enrichment the properties JSON its 8 KB check already made (stringified once per event)', () => {
    const parsed = eventInputSchema.parse({ event: 'x', properties: { plan: 'pro', n: [1, 2] } });
    expect(propertiesJson(parsed.properties!)).toBe('{"plan":"pro","n":[1,2]}');
    (parsed.properties as Record<string, unknown>).late = 1; // the validated text is reused, not made again
    expect(propertiesJson(parsed.properties!)).toBe('{"plan":"pro","n":[1,2]}');
    expect(propertiesJson({ never: 'validated' })).toBe('{"never":"validated"}');
  });
  it('drops server-computed fields a client sends', () => {
    const parsed = eventInputSchema.parse({ event: 'x', source: 'evil', ip_hash: 'x', country: 'ZZ' });
    expect(parsed).toEqual({ event: 'x' });
  });

  it('parses timestamp to epoch milliseconds', () => {
    expect(eventInputSchema.parse({ event: 'x', timestamp: '2026-01-02T03:04:05.678+01:00' }).timestamp).toBe(Date.UTC(2026, 0, 2, 2, 4, 5, 678));
  });
});

describe('batch, identify, forget', () => {
  it('rejects an empty batch and a batch of 1001 events, accepts 1000', () => {
    expect(batchInputSchema.safeParse({ events: [] }).success).toBe(false);
    expect(batchInputSchema.safeParse({ events: Array.from({ length: 1001 }, () => ({ event: 'x' })) }).success).toBe(false);
    expect(batchInputSchema.safeParse({ events: Array.from({ length: 1000 }, () => ({ event: 'x' })) }).success).toBe(true);
  });
  it('rejects a batch with one bad element', () => {
    expect(batchInputSchema.safeParse({ events: [{ event: 'x' }, { event: '' }] }).success).toBe(false);
  });
  it('requires anonymous_id and user_id on identify', () => {
    expect(identifyInputSchema.safeParse({ anonymous_id: 'a' }).success).toBe(false);
    expect(identifyInputSchema.safeParse({ user_id: 'u' }).success).toBe(false);
    expect(identifyInputSchema.safeParse({ anonymous_id: 'a', user_id: 'u', traits: { plan: 'pro' } }).success).toBe(true);
  });
  it('bounds user_id on forget', () => {
    expect(forgetInputSchema.safeParse({ user_id: '' }).success).toBe(false);
    expect(forgetInputSchema.safeParse({ user_id: 'u'.repeat(257) }).success).toBe(false);
    expect(forgetInputSchema.safeParse({ user_id: 'u'.repeat(256) }).success).toBe(true);
  });
});

describe('ISO 8601', () => {
  it.each([
    ['2026-01-02', Date.UTC(2026, 0, 2)],
    ['2026-01-02T03:04', Date.UTC(2026, 0, 2, 3, 4)],
    ['2026-01-02T03:04:05Z', Date.UTC(2026, 0, 2, 3, 4, 5)],
    ['2026-01-02 03:04:05.5', Date.UTC(2026, 0, 2, 3, 4, 5, 500)],
    ['2026-01-02T03:04:05-0230', Date.UTC(2026, 0, 2, 5, 34, 5)],
    ['1969-12-31', Date.UTC(1969, 11, 31)],
    ['0099-01-01', new Date('0099-01-01T00:00:00Z').getTime()],
    ['2000-02-29', Date.UTC(2000, 1, 29)],
  ])('parses %s', (s, ms) => expect(parseIsoDate(s)).toBe(ms));
  it.each(['', '2026', '2026-13-01', '2026-01-01T25:00', '01/02/2026', '2026-01-01T00:00:00+25:00', '2100-02-29', '0099-02-29'])('rejects %j', (s) => expect(parseIsoDate(s)).toBeNull());
});

describe('event timestamp range', () => {
  const RANGE = 'must be between 2000-01-01T00:00:00Z and 2099-12-31T23:59:59.999Z';
  const refusal = (timestamp: string) => {
    try {
      parseOrThrow(eventInputSchema, { event: 'x', timestamp });
    } catch (e) {
      return (e as ApiError).toBody() as { error: string; details: { fieldErrors: Record<string, string[]> } };
    }
    return undefined;
  };

  it('keeps its bounds in LIMITS: 2000-01-01 inclusive to 2100-01-01 exclusive', () => {
    expect(LIMITS.timestamp).toEqual({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) });
  });

  it.each([
    ['the first instant', '2000-01-01T00:00:00Z', Date.UTC(2000, 0, 1)],
    ['the first instant, as a date', '2000-01-01', Date.UTC(2000, 0, 1)],
    ['the first instant in +05:30', '2000-01-01T05:30:00+05:30', Date.UTC(2000, 0, 1)],
    ['the last instant', '2099-12-31T23:59:59.999Z', Date.UTC(2100, 0, 1) - 1],
    ['the last instant in -03:00, written in 2099', '2099-12-31T20:59:59.999-03:00', Date.UTC(2100, 0, 1) - 1],
    ['an instant in range written in 1999 (-01:00)', '1999-12-31T23:30:00-01:00', Date.UTC(2000, 0, 1, 0, 30)],
  ])('accepts %s (%s)', (_n, timestamp, ms) => {
    expect(eventInputSchema.parse({ event: 'x', timestamp }).timestamp).toBe(ms);
  });

  it.each([
    ['1 ms before the range', '1999-12-31T23:59:59.999Z'],
    ['the end of the range', '2100-01-01T00:00:00Z'],
    ['an instant past the end though written in 2099 (-00:01)', '2099-12-31T23:59:59.999-00:01'],
    ['2190 (its Date and DateTime buckets wrap to 2010 and 2053)', '2190-01-01T10:00:00Z'],
    ['the epoch of an unset device clock', '1970-01-01T00:00:00Z'],
    ['year 0099 (not 1999)', '0099-12-31T23:59:59Z'],
    ['year 9999', '9999-12-31T23:59:59Z'],
  ])('refuses %s with invalid_payload naming the range (%s)', (_n, timestamp) => {
    expect(refusal(timestamp)).toEqual({ error: 'invalid_payload', details: expect.objectContaining({ fieldErrors: { timestamp: [RANGE] } }) });
  });

  it('says ISO 8601 for a timestamp that is not one', () => {
    expect(refusal('2026-02-31T00:00:00Z')!.details.fieldErrors).toEqual({ timestamp: ['must be an ISO 8601 date or date-time'] });
  });

  it('accepts exactly the instants in the range, whatever offset they are written in (property)', () => {
    const { min, max } = LIMITS.timestamp;
    const pad = (n: number) => String(n).padStart(2, '0');
    const written = (ms: number, offsetMin: number) => {
      const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 23);
      const a = Math.abs(offsetMin);
      return offsetMin === 0 ? `${local}Z` : `${local}${offsetMin < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
    };
    const near = (edge: number) => fc.integer({ min: edge - 2 * 86_400_000, max: edge + 2 * 86_400_000 });
    const instant = fc.oneof(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) }), near(min), near(max), fc.constantFrom(min - 1, min, max - 1, max));
    fc.assert(
      fc.property(instant, fc.integer({ min: -18 * 60, max: 18 * 60 }), (ms, offsetMin) => {
        const parsed = eventInputSchema.safeParse({ event: 'x', timestamp: written(ms, offsetMin) });
        if (ms >= min && ms < max) expect(parsed.data?.timestamp).toBe(ms);
        else expect(parsed.error?.issues.map((i) => i.message)).toEqual([RANGE]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('read params', () => {
  const range = { from: '2026-01-01', to: '2026-02-01' };
  it('defaults limits and metric', () => {
    expect(queryParamsSchema.parse(range).limit).toBe(100);
    expect(statsParamsSchema.parse(range)).toMatchObject({ metric: 'count', limit: 100 });
    expect(sourcesParamsSchema.parse(range)).toMatchObject({ breakdown: 'source_medium', limit: 50 });
  });
  it.each([
    ['missing from', queryParamsSchema, { to: range.to }],
    ['to before from', queryParamsSchema, { from: range.to, to: range.from }],
    ['limit 0', queryParamsSchema, { ...range, limit: '0' }],
    ['limit 1001', queryParamsSchema, { ...range, limit: '1001' }],
    ['bad metric', statsParamsSchema, { ...range, metric: 'sum' }],
    ['bad interval', statsParamsSchema, { ...range, interval: 'month' }],
    ['sources limit 201', sourcesParamsSchema, { ...range, limit: '201' }],
    ['bad breakdown', sourcesParamsSchema, { ...range, breakdown: 'medium' }],
  ])('rejects %s', (_n, schema, input) => expect(schema.safeParse(input).success).toBe(false));

  it.each([
    ['from', { from: '2026-01-01T00:00:00 02:00', to: range.to }],
    ['to', { from: range.from, to: '2026-02-01T10:00:00.5 0530' }],
  ])('tells that a + sent unencoded in %s (it arrives as a space) must be URL-encoded as %%2B', (field, input) => {
    for (const schema of [queryParamsSchema, statsParamsSchema, sourcesParamsSchema]) {
      const messages = schema.safeParse(input).error!.issues.filter((i) => i.path[0] === field).map((i) => i.message);
      expect(messages).toEqual([expect.stringContaining('must be URL-encoded as %2B')]);
    }
  });

  it('keeps the plain ISO 8601 message for other malformed values', () => {
    expect(queryParamsSchema.safeParse({ from: 'yesterday 02:00', to: range.to }).error!.issues[0]!.message).toBe('must be an ISO 8601 date or date-time');
  });

  it.each([
    ['a range starting before 2000', { from: '1970-01-01', to: '2026-02-01' }, { from: Date.UTC(2000, 0, 1), to: Date.UTC(2026, 1, 1) }],
    ['a range ending after 2099', { from: '2026-01-01', to: '2200-01-01' }, { from: Date.UTC(2026, 0, 1), to: Date.UTC(2100, 0, 1) }],
    ['a range of years 0001 to 9999', { from: '0001-01-01', to: '9999-12-31T23:59:59Z' }, { from: Date.UTC(2000, 0, 1), to: Date.UTC(2100, 0, 1) }],
    ['a range wholly before 2000 (empty once cut)', { from: '1990-01-01', to: '1995-01-01' }, { from: Date.UTC(2000, 0, 1), to: Date.UTC(2000, 0, 1) }],
    ['a range inside', { from: '2000-01-01', to: '2099-12-31T23:59:59.999Z' }, { from: Date.UTC(2000, 0, 1), to: Date.UTC(2100, 0, 1) - 1 }],
  ])('cuts %s to the accepted timestamps, after checking the order as sent', (_n, input, cut) => {
    for (const schema of [queryParamsSchema, statsParamsSchema, sourcesParamsSchema]) expect(schema.parse(input)).toMatchObject(cut);
  });

  it('still refuses a range whose to is not after its from as sent, even outside the accepted timestamps', () => {
    expect(queryParamsSchema.safeParse({ from: '1995-01-01', to: '1990-01-01' }).success).toBe(false);
  });
});

describe('errors', () => {
  it('maps every spec code to its status', () => {
    expect(ERROR_STATUS).toMatchObject({
      invalid_payload: 400, invalid_params: 400, invalid_group_by: 400, missing_bearer_token: 401, malformed_api_key: 401,
      invalid_api_key: 401, key_kind_mismatch: 401, invalid_session: 401, origin_not_allowed: 403, insufficient_scope: 403,
      forget_requires_secret_key: 403, rate_limited: 429, internal_error: 500, forget_failed: 500, upstream_failed: 502,
    });
  });
  it('parseOrThrow raises invalid_payload with fieldErrors', () => {
    try {
      parseOrThrow(eventInputSchema, {});
      throw new Error('expected a throw');
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      const body = (e as ApiError).toBody() as { error: string; details: { fieldErrors: Record<string, string[]> } };
      expect(body.error).toBe('invalid_payload');
      expect(body.details.fieldErrors.event).toBeDefined();
    }
  });
});

describe('route paths', () => {
  it('pathPattern matches one segment per parameter and every other character literally (the proxy routes by it)', () => {
    const re = (path: string) => new RegExp(pathPattern(path));
    expect(pathPattern('/admin/projects/{id}/keys')).toBe('^/admin/projects/[^/]+/keys$');
    expect(re('/sdk/{version}/analytics.min.js').test('/sdk/1.2.3/analytics.min.js')).toBe(true);
    for (const path of ['/sdk/1.2.3/analyticsXminXjs', '/sdk/a/b/analytics.min.js', '/sdk//analytics.min.js', '/sdk/1/analytics.min.js/x', 'x/sdk/1/analytics.min.js']) {
      expect({ path, matches: re('/sdk/{version}/analytics.min.js').test(path) }).toEqual({ path, matches: false });
    }
    expect(re('/openapi.json').test('/openapi-json')).toBe(false);
  });

  it('routeOf finds the declaration a request reached by method and path', () => {
    expect(routeOf('GET', '/admin/projects/0f6c')).toBe(routes.getProject);
    expect(routeOf('PATCH', '/admin/projects/0f6c')).toBe(routes.updateProject);
    expect(routeOf('GET', '/sdk/1.2.3/analytics.min.js')).toBe(routes.sdkScriptVersion);
    expect(routeOf('GET', '/admin/projects/0f6c/x')).toBeUndefined();
  });
});
