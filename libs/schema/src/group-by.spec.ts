import { ApiError } from './errors';
import { STATS_GROUP_BY, parseGroupBy } from './group-by';
import { statsParamsSchema } from './read.schema';
import { parseOrThrow } from './validate';

describe('parseGroupBy', () => {
  it.each([
    [undefined, []],
    ['', []],
    [' , ,', []],
    ['source', ['source']],
    [' source , medium ', ['source', 'medium']],
    ['source,,medium,', ['source', 'medium']],
    ['source,medium,source', ['source', 'medium']],
    [STATS_GROUP_BY.join(','), [...STATS_GROUP_BY]],
  ])('parses %j to %j', (raw, expected) => {
    expect(parseGroupBy(raw)).toEqual(expected);
  });

  it.each(['ip_hash', 'source;DROP TABLE x', 'Source', 'source,user_id', 'timestamp'])('rejects %j with invalid_group_by listing the allowed columns', (raw) => {
    let error: unknown;
    try {
      parseGroupBy(raw);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    const body = (error as ApiError).toBody();
    expect((error as ApiError).status).toBe(400);
    expect(body).toMatchObject({ error: 'invalid_group_by', allowed: [...STATS_GROUP_BY], details: { unknown: expect.any(Array) } });
  });

  it('names each unknown column once, at most 50 of them, each cut to 100 characters, saying the rest were cut', () => {
    const raw = [...Array.from({ length: 5000 }, (_, i) => `c${i}`), 'x'.repeat(10_000), 'c1', 'c1'].join(',');
    const details = (() => {
      try {
        parseGroupBy(raw);
      } catch (e) {
        return (e as ApiError).toBody().details as { unknown: string[]; truncated?: boolean };
      }
      throw new Error('expected a refusal');
    })();
    expect(details.unknown).toHaveLength(50);
    expect(details.truncated).toBe(true);
    expect(() => parseGroupBy(`c1,c1,${'y'.repeat(10_000)}`)).toThrow(expect.objectContaining({ extra: expect.objectContaining({ details: expect.objectContaining({ unknown: ['c1', `${'y'.repeat(100)}…`] }) }) }));
  });
});

describe('statsParamsSchema parses group_by at the edge', () => {
  const range = { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' };

  it('hands the rest of the code typed columns, not the comma-separated string', () => {
    expect(statsParamsSchema.parse({ ...range, group_by: ' source,medium,source ' }).group_by).toEqual(['source', 'medium']);
    expect(statsParamsSchema.parse(range).group_by).toBeUndefined();
  });

  it('answers invalid_group_by for an unknown column once the rest of the query string is valid', () => {
    expect(() => parseOrThrow(statsParamsSchema, { ...range, group_by: 'ip_hash' }, 'invalid_params')).toThrow(expect.objectContaining({ code: 'invalid_group_by' }));
  });

  it('answers invalid_params first when the query string is also invalid', () => {
    expect(() => parseOrThrow(statsParamsSchema, { group_by: 'ip_hash' }, 'invalid_params')).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  });
});
