import { ApiError, ERROR_STATUS, batchInputSchema, eventInputSchema, propertiesJson, forgetInputSchema, identifyInputSchema, parseIsoDate, parseOrThrow, queryParamsSchema, statsParamsSchema, sourcesParamsSchema } from './index';

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
  ])('parses %s', (s, ms) => expect(parseIsoDate(s)).toBe(ms));
  it.each(['', '2026', '2026-13-01', '2026-01-01T25:00', '1969-12-31', '01/02/2026', '2026-01-01T00:00:00+25:00'])('rejects %j', (s) => expect(parseIsoDate(s)).toBeNull());
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
