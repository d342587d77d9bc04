import * as api from './index';

describe('public API', () => {
  it('exports classify, CLASSIFIER_RULES, the channel, AI-assistant and source-name functions and tables only (plus types)', () => {
    expect(Object.keys(api).sort()).toStrictEqual(['AI_ASSISTANTS', 'CHANNELS', 'CHANNEL_RULES', 'CLASSIFIER_RULES', 'aiAssistantOf', 'aiAssistantOfSource', 'channelOf', 'classify', 'sourceKeyOf', 'sourceLabelOf']);
    expect(api.classify({ url: 'https://example.com/?gclid=1' })).toStrictEqual({
      source: 'google',
      medium: 'paid',
      confidence: 'high',
      rule_id: 'click_id',
    });
  });
});
