import { batchInputSchema, eventInputSchema, identifyInputSchema } from './ingest.schema';
import { insightsBodySchema } from './insights.schema';
import { statsParamsSchema } from './read.schema';
import { MAX_WARNINGS, suggestName, unknownFieldWarnings } from './unknown-fields';

// Issue 50, "typos vanish silently": what a request sends that its schema drops is named, with the name it meant.
describe('unknownFieldWarnings', () => {
  it("names the README's typo example, each with the field it meant", () => {
    const body = { event: 'typo_test', userId: 'u-1', anonymousId: 'a-1', props: { plan: 'pro' } };
    expect(unknownFieldWarnings(eventInputSchema, body, 'field')).toEqual([
      'unknown field userId; did you mean user_id?',
      'unknown field anonymousId; did you mean anonymous_id?',
      'unknown field props; did you mean properties?',
    ]);
  });

  it('says nothing of a body the schema knows whole, free-form properties included', () => {
    const body = { event: 'ok', user_id: 'u', anonymous_id: 'a', properties: { userId: 'free-form', nested: { x: 1 } }, url: 'https://e.com/' };
    expect(unknownFieldWarnings(eventInputSchema, body, 'field')).toEqual([]);
    expect(unknownFieldWarnings(identifyInputSchema, { anonymous_id: 'a', user_id: 'u', traits: { anyThing: 1 } }, 'field')).toEqual([]);
  });

  it('says that a field the server computes is ignored', () => {
    expect(unknownFieldWarnings(eventInputSchema, { event: 'x', country: 'FR', device_type: 'mobile' }, 'field')).toEqual([
      'field country is computed by the server; ignored',
      'field device_type is computed by the server; ignored',
    ]);
  });

  it("names a batch's events once per mistake, with where it was first and how often", () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({ event: 'x', userId: `u-${i}` }));
    events[5] = { event: 'x', userId: 'u', ...{ timestmp: '2026-01-01T00:00:00Z' } } as never;
    expect(unknownFieldWarnings(batchInputSchema, { events, sentAt: 'x' }, 'field')).toEqual([
      'unknown field events[0].userId (and in 999 more); did you mean user_id?',
      'unknown field events[5].timestmp; did you mean timestamp?',
      expect.stringMatching(/^unknown field sentAt; /),
    ]);
  });

  it('names query parameters and insights fields', () => {
    expect(unknownFieldWarnings(statsParamsSchema, { from: 'a', to: 'b', groupby: 'source' }, 'parameter')).toEqual(['unknown parameter groupby; did you mean group_by?']);
    expect(unknownFieldWarnings(insightsBodySchema, { from: 'a', to: 'b', metrics: ['visitors'], dimension: ['source'] }, 'field')).toEqual([
      'unknown field dimension; did you mean dimensions?',
    ]);
  });

  it('keeps the answer bounded whatever was sent', () => {
    const body = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`junk_${i}`, i]));
    const warnings = unknownFieldWarnings(eventInputSchema, { event: 'x', ...body }, 'field');
    expect(warnings).toHaveLength(MAX_WARNINGS);
    expect(warnings.at(-1)).toBe(`${500 - MAX_WARNINGS + 1} more ignored names`);
  });

  it('suggests only close names', () => {
    expect(suggestName('event_name', ['event', 'event_id'])).toBe('event');
    expect(suggestName('utm', ['event', 'url'])).toBeUndefined();
    expect(suggestName('colour', ['event', 'path'])).toBeUndefined();
  });
});
