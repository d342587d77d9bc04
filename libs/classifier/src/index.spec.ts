import * as api from './index';

describe('public API', () => {
  it('exports classify and CLASSIFIER_RULES only (plus types)', () => {
    expect(Object.keys(api).sort()).toStrictEqual(['CLASSIFIER_RULES', 'classify']);
    expect(api.classify({ url: 'https://example.com/?gclid=1' })).toStrictEqual({
      source: 'google',
      medium: 'paid',
      confidence: 'high',
      rule_id: 'click_id',
    });
  });
});
