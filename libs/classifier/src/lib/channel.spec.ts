import { AI_ASSISTANTS, aiAssistantOf, aiAssistantOfSource } from './ai-assistants';
import { channelOf, CHANNELS, type Channel } from './channel';
import { CHANNEL_RULES } from './channel-rules';
import { classify } from './classify';
import type { ClassifyInput } from './types';

const page = (qs = ''): string => `https://shop.example.com/landing${qs === '' ? '' : `?${qs}`}`;
const ev = (qs: string, referrer?: string): ClassifyInput => ({ url: page(qs), referrer });

// [name, input, channel, the rule classify() applies (unchanged by the channel)]
const cases: ReadonlyArray<readonly [string, ClassifyInput, Channel, string]> = [
  ['no referrer, no parameters', ev(''), 'direct', 'direct'],
  ['same-host referrer', ev('', 'https://shop.example.com/cart'), 'internal', 'internal'],
  ['same-host referrer with utm_source=chatgpt.com stays utm_source', ev('utm_source=chatgpt.com', 'https://shop.example.com/'), 'ai_assistant', 'utm_source'],
  ['gclid', ev('gclid=1'), 'paid_search', 'click_id'],
  ['msclkid', ev('msclkid=1'), 'paid_search', 'click_id'],
  ['ttclid', ev('ttclid=1'), 'paid_social', 'click_id'],
  ['li_fat_id', ev('li_fat_id=1'), 'paid_social', 'click_id'],
  ['gclid from chatgpt.com: the click id wins', ev('gclid=1', 'https://chatgpt.com/'), 'paid_search', 'click_id'],
  ['fbclid + l.facebook.com', ev('fbclid=1', 'https://l.facebook.com/'), 'paid_social', 'fbclid_ad_referrer'],
  ['fbclid + utm_source=instagram', ev('fbclid=1&utm_source=instagram'), 'paid_social', 'fbclid_utm_source'],
  ['fbclid alone', ev('fbclid=1'), 'paid_social', 'fbclid_only'],
  ['cpc from google', ev('utm_source=google&utm_medium=cpc'), 'paid_search', 'paid_utm_medium'],
  ['cpc from "Google Ads"', ev('utm_source=Google+Ads&utm_medium=cpc'), 'paid_search', 'paid_utm_medium'],
  ['cpc from adwords', ev('utm_source=adwords&utm_medium=cpc'), 'paid_search', 'paid_utm_medium'],
  ['cpc from bing.com', ev('utm_source=www.bing.com&utm_medium=cpc'), 'paid_search', 'paid_utm_medium'],
  ['paid from yandex', ev('utm_source=yandex&utm_medium=paid'), 'paid_search', 'paid_utm_medium'],
  ['cpc from facebook', ev('utm_source=facebook&utm_medium=cpc'), 'paid_social', 'paid_utm_medium'],
  ['cpc from fb', ev('utm_source=fb&utm_medium=cpc'), 'paid_social', 'paid_utm_medium'],
  ['paid from meta_ads', ev('utm_source=meta_ads&utm_medium=paid'), 'paid_social', 'paid_utm_medium'],
  ['paid_social from a newsletter partner: the medium says social', ev('utm_source=partner&utm_medium=paid_social'), 'paid_social', 'paid_utm_medium'],
  ['cpm from linkedin', ev('utm_source=linkedin&utm_medium=cpm'), 'paid_social', 'paid_utm_medium'],
  ['display from a DSP', ev('utm_source=criteo&utm_medium=display'), 'paid_other', 'paid_utm_medium'],
  ['retargeting, no utm_source, unknown referrer', ev('utm_medium=retargeting', 'https://ads.example.net/'), 'paid_other', 'paid_utm_medium'],
  ['cpc, no utm_source, google referrer', ev('utm_medium=cpc', 'https://www.google.com/'), 'paid_search', 'paid_utm_medium'],
  ['cpc, no utm_source, twitter referrer', ev('utm_medium=cpc', 'https://t.co/x'), 'paid_social', 'paid_utm_medium'],
  ['cpc with utm_source=chatgpt: paid wins', ev('utm_source=chatgpt&utm_medium=cpc'), 'paid_other', 'paid_utm_medium'],
  ['ppc (not a rule-4 medium) from google', ev('utm_source=google&utm_medium=ppc'), 'paid_search', 'utm_source'],
  ['paid-social (not a rule-4 medium) from a partner', ev('utm_source=partner&utm_medium=paid-social'), 'paid_social', 'utm_source'],
  ['cpv from youtube', ev('utm_source=youtube&utm_medium=cpv'), 'paid_social', 'utm_source'],
  ['banner from a publisher', ev('utm_source=publisher&utm_medium=banner'), 'paid_other', 'utm_source'],
  ['utm_medium=organic', ev('utm_source=google&utm_medium=organic'), 'organic_search', 'utm_source'],
  ['utm_medium=seo', ev('utm_source=partner&utm_medium=seo'), 'organic_search', 'utm_source'],
  ['utm_medium=social', ev('utm_source=twitter&utm_medium=social'), 'organic_social', 'utm_source'],
  ['utm_medium=social-network', ev('utm_source=reddit&utm_medium=social-network'), 'organic_social', 'utm_source'],
  ['utm_medium=email', ev('utm_source=newsletter&utm_medium=email'), 'email', 'utm_source'],
  ['utm_medium=E-Mail', ev('utm_source=newsletter&utm_medium=E-Mail'), 'email', 'utm_source'],
  ['utm_medium=newsletter', ev('utm_source=weekly&utm_medium=newsletter'), 'email', 'utm_source'],
  ['utm_source alone', ev('utm_source=partner'), 'referral', 'utm_source'],
  ['utm_source=google alone: the medium (referral) decides', ev('utm_source=google'), 'referral', 'utm_source'],
  ['utm_medium=referral', ev('utm_source=blog&utm_medium=referral'), 'referral', 'utm_source'],
  ['unknown utm_medium: referral', ev('utm_source=partner&utm_medium=affiliate'), 'referral', 'utm_source'],
  ['utm_medium=sms: referral', ev('utm_source=shop&utm_medium=sms'), 'referral', 'utm_source'],
  ['utm_source=chatgpt.com (ChatGPT links)', ev('utm_source=chatgpt.com'), 'ai_assistant', 'utm_source'],
  ['utm_source=ChatGPT.com, any case', ev('utm_source=ChatGPT.com'), 'ai_assistant', 'utm_source'],
  ['utm_source=perplexity', ev('utm_source=perplexity'), 'ai_assistant', 'utm_source'],
  ['utm_source=copilot.microsoft.com with utm_medium=referral', ev('utm_source=copilot.microsoft.com&utm_medium=referral'), 'ai_assistant', 'utm_source'],
  ['utm_source=newsletter from chatgpt.com: the referrer names the assistant', ev('utm_source=newsletter&utm_medium=email', 'https://chatgpt.com/'), 'ai_assistant', 'utm_source'],
  ['chatgpt.com referrer', ev('', 'https://chatgpt.com/'), 'ai_assistant', 'referral'],
  ['chat.openai.com referrer', ev('', 'https://chat.openai.com/c/1'), 'ai_assistant', 'referral'],
  ['www.perplexity.ai referrer', ev('', 'https://www.perplexity.ai/search?q=x'), 'ai_assistant', 'referral'],
  ['claude.ai referrer', ev('', 'https://claude.ai/'), 'ai_assistant', 'referral'],
  ['gemini.google.com referrer (a referral-only host)', ev('', 'https://gemini.google.com/app'), 'ai_assistant', 'referral'],
  ['copilot.microsoft.com referrer', ev('', 'https://copilot.microsoft.com/'), 'ai_assistant', 'referral'],
  ['you.com referrer (listed as a search engine)', ev('', 'https://you.com/search?q=x'), 'ai_assistant', 'search_referrer'],
  ['aistudio.google.com referrer (under google.*)', ev('', 'https://aistudio.google.com/'), 'ai_assistant', 'search_referrer'],
  ['ChatGPT Android app referrer', ev('', 'android-app://com.openai.chatgpt/'), 'ai_assistant', 'referral'],
  ['chatgpt.com.evil.example is no assistant', ev('', 'https://chatgpt.com.evil.example/'), 'referral', 'referral'],
  ['notchatgpt.com is no assistant', ev('', 'https://notchatgpt.com/'), 'referral', 'referral'],
  ['google search', ev('', 'https://www.google.de/'), 'organic_search', 'search_referrer'],
  ['facebook', ev('', 'https://www.facebook.com/'), 'organic_social', 'facebook_referrer'],
  ['reddit', ev('', 'https://old.reddit.com/r/x'), 'organic_social', 'social_referrer'],
  ['webmail', ev('', 'https://mail.google.com/'), 'email', 'email_referrer'],
  ['Hacker News', ev('', 'https://news.ycombinator.com/item?id=1'), 'referral', 'referral'],
  ['docs.google.com (referral-only)', ev('', 'https://docs.google.com/document/d/1'), 'referral', 'referral'],
  ['utm_campaign alone', ev('utm_campaign=x'), 'referral', 'referral'],
  ['unparseable referrer with utm_content', ev('utm_content=x', 'not a url'), 'referral', 'referral'],
];

describe('channelOf', () => {
  it.each(cases)('%s -> %s', (_name, input, channel, ruleId) => {
    const classified = classify(input);
    expect(classified.rule_id).toBe(ruleId);
    expect(channelOf(classified, input)).toBe(channel);
  });

  it('reaches every channel in the table', () => {
    expect(new Set(cases.map((c) => c[2]))).toStrictEqual(new Set(CHANNELS));
  });

  it('never throws and always answers a channel, whatever the input', () => {
    const inputs: ClassifyInput[] = [{}, { url: null, referrer: null }, { url: '%%%', referrer: '::::' }, { url: 42, referrer: {} } as unknown as ClassifyInput];
    for (const input of inputs) expect(CHANNELS).toContain(channelOf(classify(input), input));
  });

  it('describes its rules for every channel, in order', () => {
    expect(CHANNEL_RULES.map((r) => r.order)).toStrictEqual(CHANNEL_RULES.map((_, i) => i + 1));
    expect(new Set(CHANNEL_RULES.map((r) => r.channel))).toStrictEqual(new Set(CHANNELS));
    expect(Object.isFrozen(CHANNEL_RULES)).toBe(true);
  });
});

describe('aiAssistantOfSource', () => {
  it('names the assistant of every stored source an assistant visit gets: rule 13 slugs and utm_source values', () => {
    for (const a of AI_ASSISTANTS) {
      for (const domain of a.domains) {
        const { source, rule_id } = classify({ url: 'https://shop.example.com/', referrer: `https://${domain}/` });
        // a host that is also a search engine's (aistudio.google.com, you.com) keeps that engine's name as its source
        if (rule_id !== 'search_referrer') expect({ domain, assistant: aiAssistantOfSource(source) }).toEqual({ domain, assistant: a.name });
        const tagged = classify({ url: `https://shop.example.com/?utm_source=${domain}` }).source;
        expect({ domain, assistant: aiAssistantOfSource(tagged) }).toEqual({ domain, assistant: a.name });
      }
    }
    expect(aiAssistantOfSource('hacker-news')).toBeUndefined();
    expect(aiAssistantOfSource(null)).toBeUndefined();
  });
});

describe('aiAssistantOf', () => {
  it.each([
    ['chatgpt.com', 'chatgpt'],
    ['chat.openai.com', 'chatgpt'],
    ['https://chatgpt.com/c/abc', 'chatgpt'],
    ['chatgpt', 'chatgpt'],
    [' ChatGPT.com ', 'chatgpt'],
    ['www.perplexity.ai', 'perplexity'],
    ['labs.perplexity.ai', 'perplexity'],
    ['perplexity', 'perplexity'],
    ['claude.ai', 'claude'],
    ['claude', 'claude'],
    ['gemini.google.com', 'gemini'],
    ['copilot.microsoft.com', 'copilot'],
    ['you.com', 'youcom'],
    ['phind.com', 'phind'],
    ['poe.com', 'poe'],
    ['meta.ai', 'meta-ai'],
    ['chat.deepseek.com', 'deepseek'],
    ['chat.mistral.ai', 'mistral'],
    ['grok.com', 'grok'],
    ['android-app://com.anthropic.claude/', 'claude'],
    ['google.com', undefined],
    ['mistral.ai', undefined],
    ['openai.com', undefined],
    ['meta', undefined],
    ['newsletter', undefined],
    ['', undefined],
    [null, undefined],
    [undefined, undefined],
    ['chatgpt.com.evil.example', undefined],
    ['mailto:x@chatgpt.com', undefined],
  ])('%j -> %j', (value, name) => {
    expect(aiAssistantOf(value)).toBe(name);
  });

  it('has well-formed, unique slugs, domains, utm_source names and apps', () => {
    const names = AI_ASSISTANTS.map((a) => a.name);
    for (const name of names) expect(name).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
    expect(new Set(names).size).toBe(names.length);
    const domains = AI_ASSISTANTS.flatMap((a) => a.domains);
    for (const d of domains) expect(d).toMatch(/^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$/);
    expect(new Set(domains).size).toBe(domains.length);
    const utm = AI_ASSISTANTS.flatMap((a) => a.utm_sources);
    expect(new Set(utm).size).toBe(utm.length);
    for (const a of AI_ASSISTANTS) for (const d of a.domains) expect(aiAssistantOf(d)).toBe(a.name);
    for (const a of AI_ASSISTANTS) for (const s of a.utm_sources) expect(aiAssistantOf(s)).toBe(a.name);
  });
});
