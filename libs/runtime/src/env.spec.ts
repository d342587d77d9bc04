import { z } from 'zod';
import { ConfigError, appConfig, envInt, envString, loadConfig, parseTrustProxy, requireOneOf, requiredSetting } from './env';

describe('config', () => {
  it('reports every problem at once', () => {
    const schema = z.object({ A: envInt(1, 1, 10), B: z.string() });
    expect(() => loadConfig(schema, { A: '99' })).toThrow(ConfigError);
    try {
      loadConfig(schema, { A: '99' });
    } catch (e) {
      expect((e as ConfigError).problems).toHaveLength(2);
    }
    expect(loadConfig(schema, { A: '', B: 'x' })).toEqual({ A: 1, B: 'x' });
  });
  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['loopback', ['loopback']],
    ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']],
  ])('parses TRUST_PROXY=%j', (v, out) => expect(parseTrustProxy(v)).toEqual(out));
});


describe('app config', () => {
  const schema = requireOneOf(z.object({ A: envString(), B: envString(), C: requiredSetting(), N: envInt(1, 1, 10) }), ['A', 'B']);
  it('names the missing settings with the wrong ones, all at once, under the app name', () => {
    const app = appConfig('demo', schema);
    expect(() => app.load({ C: '' })).toThrow('demo: missing required settings A or B, C (see docs/configuration.md)');
    expect(() => app.load({ N: '11' })).toThrow(/^demo: invalid configuration:\n {2}- missing required settings A or B, C \(see docs\/configuration\.md\)\n {2}- N: /);
    expect(app.load({ B: 'b', C: 'c' })).toEqual({ B: 'b', C: 'c', N: 1 });
  });
});
