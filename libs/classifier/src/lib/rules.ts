import type { RuleDescription, RuleId } from './types';

/** Every rule id, in the order the rules are tried. */
export const RULE_IDS: readonly RuleId[] = Object.freeze([
  'click_id',
  'fbclid_ad_referrer',
  'fbclid_utm_source',
  'paid_utm_medium',
  'fbclid_only',
  'utm_source',
  'facebook_referrer',
  'social_referrer',
  'search_referrer',
  'email_referrer',
  'internal',
  'direct',
  'referral',
] as const);

const rules: RuleDescription[] = [
  {
    order: 1,
    rule_id: 'click_id',
    condition: 'The page URL query string has a non-empty gclid, msclkid, ttclid or li_fat_id parameter.',
    result:
      'source google (gclid), bing (msclkid), tiktok (ttclid) or linkedin (li_fat_id), checked in that order when several are present; medium paid; confidence high.',
  },
  {
    order: 2,
    rule_id: 'fbclid_ad_referrer',
    condition: 'The page URL has a non-empty fbclid and the referrer host is l.facebook.com or lm.facebook.com.',
    result: 'source facebook; medium paid; confidence high.',
  },
  {
    order: 3,
    rule_id: 'fbclid_utm_source',
    condition: 'The page URL has a non-empty fbclid and utm_source is facebook, fb or instagram (case-insensitive).',
    result: 'source instagram when utm_source is instagram, otherwise facebook; medium paid; confidence high.',
  },
  {
    order: 4,
    rule_id: 'paid_utm_medium',
    condition: 'utm_medium is cpc, paid, paid_social, cpm, display or retargeting (case-insensitive).',
    result:
      'source is utm_source lowercased when present, otherwise the name the referrer would get from rules 7-10/13 (a social network or search engine name, "email", or the referrer host slug), otherwise "unknown"; medium paid; confidence high.',
  },
  {
    order: 5,
    rule_id: 'fbclid_only',
    condition: 'The page URL has a non-empty fbclid and no utm_source.',
    result: 'source facebook; medium paid; confidence medium.',
  },
  {
    order: 6,
    rule_id: 'utm_source',
    condition: 'The page URL has a non-empty utm_source (and none of the paid signals above).',
    result: 'source is utm_source lowercased; medium is utm_medium lowercased, or "referral" when absent; confidence high.',
  },
  {
    order: 7,
    rule_id: 'facebook_referrer',
    condition: 'The referrer host belongs to Facebook (facebook.com, fb.com, fb.me, messenger.com, m.me, ...) and there is no fbclid.',
    result: 'source facebook; medium social; confidence medium.',
  },
  {
    order: 8,
    rule_id: 'social_referrer',
    condition: 'The referrer host belongs to another known social network (twitter, linkedin, reddit, youtube, ...).',
    result: "source is the network's canonical name; medium social; confidence medium.",
  },
  {
    order: 9,
    rule_id: 'search_referrer',
    condition: 'The referrer host belongs to a known search engine (any of its country domains, e.g. google.co.uk, yandex.com.tr).',
    result: "source is the engine's canonical name; medium organic; confidence medium.",
  },
  {
    order: 10,
    rule_id: 'email_referrer',
    condition: "The referrer host is a webmail client or an email service provider's click-tracking / link-protection host.",
    result: 'source email; medium email; confidence medium.',
  },
  {
    order: 11,
    rule_id: 'internal',
    condition:
      'The referrer host equals the request host (the page URL host, else the Host header), compared lowercased, without port and ignoring a leading www.',
    result: 'source internal; medium direct; confidence high.',
  },
  {
    order: 12,
    rule_id: 'direct',
    condition: 'No usable referrer, no utm_* parameter and no click id (fbclid included).',
    result: 'source direct; medium direct; confidence high.',
  },
  {
    order: 13,
    rule_id: 'referral',
    condition: 'Anything else.',
    result:
      'source is the slug of the referrer host (lowercased, leading www. removed, runs of characters outside [a-z0-9] replaced by "-", e.g. news-ycombinator-com), or "unknown" when there is no usable referrer; medium referral; confidence low.',
  },
];

/** The 13 rules, in the order they are tried (first match wins). Frozen. */
export const CLASSIFIER_RULES: readonly RuleDescription[] = Object.freeze(rules.map((r) => Object.freeze(r)));
