import type { Channel } from './channel';

export interface ChannelRuleDescription {
  order: number;
  channel: Channel;
  condition: string;
}

const rules: ChannelRuleDescription[] = [
  { order: 1, channel: 'internal', condition: 'Rule 11 (internal) fired.' },
  { order: 2, channel: 'direct', condition: 'Rule 12 (direct) fired.' },
  {
    order: 3,
    channel: 'paid_search',
    condition:
      'A paid rule (1-5) fired and the source names a search engine (google, bing, ... or "google ads", adwords), or utm_medium says search (paid_search); also rule 6 with a paid-looking utm_medium (ppc, cpv, paid-search, ...) and such a source.',
  },
  {
    order: 4,
    channel: 'paid_social',
    condition: 'As paid_search, but the source names a social network (facebook, fb, ig, meta, tiktok, linkedin, ...) or utm_medium says social (paid_social).',
  },
  { order: 5, channel: 'paid_other', condition: 'Any other paid result (display, retargeting, an unknown network, banner/interstitial media).' },
  {
    order: 6,
    channel: 'ai_assistant',
    condition:
      'Not paid, internal or direct, and the referrer host (or Android app) or utm_source names an AI assistant (chatgpt.com, perplexity.ai, claude.ai, gemini.google.com, copilot.microsoft.com, ...), whatever source and medium the rules gave.',
  },
  { order: 7, channel: 'organic_social', condition: 'Rule 7 or 8 fired, or rule 6 with utm_medium social (social-network, social-media, sm, organic_social, ...).' },
  { order: 8, channel: 'organic_search', condition: 'Rule 9 fired, or rule 6 with utm_medium organic (search, seo, organic_search, ...).' },
  { order: 9, channel: 'email', condition: 'Rule 10 fired, or rule 6 with utm_medium email (e-mail, mail, newsletter).' },
  { order: 10, channel: 'referral', condition: 'Anything else: rule 13, and rule 6 with no utm_medium or one not named above (affiliate, sms, none, ...).' },
];

/** How channelOf decides, in order (first match wins). Frozen. */
export const CHANNEL_RULES: readonly ChannelRuleDescription[] = Object.freeze(rules.map((r) => Object.freeze(r)));
