import fc from 'fast-check';
import { classify, classifyUnguarded } from './classify';
import { RULE_IDS } from './rules';
import type { ClassifiedSource, ClassifyInput, Confidence, RuleId } from './types';

const CONFIDENCE: Record<RuleId, Confidence> = {
  click_id: 'high',
  fbclid_ad_referrer: 'high',
  fbclid_utm_source: 'high',
  paid_utm_medium: 'high',
  fbclid_only: 'medium',
  utm_source: 'high',
  facebook_referrer: 'medium',
  social_referrer: 'medium',
  search_referrer: 'medium',
  email_referrer: 'medium',
  internal: 'high',
  direct: 'high',
  referral: 'low',
};
const FIXED_MEDIUM: Partial<Record<RuleId, string>> = {
  click_id: 'paid',
  fbclid_ad_referrer: 'paid',
  fbclid_utm_source: 'paid',
  paid_utm_medium: 'paid',
  fbclid_only: 'paid',
  facebook_referrer: 'social',
  social_referrer: 'social',
  search_referrer: 'organic',
  email_referrer: 'email',
  internal: 'direct',
  direct: 'direct',
  referral: 'referral',
};

const PARAM_NAMES = ['gclid', 'msclkid', 'ttclid', 'li_fat_id', 'fbclid', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'UTM_SOURCE', 'ref', ''];
const HOSTS = ['example.com', 'www.example.com', 'google.co.uk', 'l.facebook.com', 'mail.google.com', 't.co', 'news.ycombinator.com', '[::1]', '127.0.0.1', 'xn--bcher-kva.de', ''];
const SCHEMES = ['https://', 'http://', '//', '', 'android-app://', 'ftp://', 'javascript:', 'HTTPS://'];

const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom('%', '?', '&', '=', '#', '/', ':', '.', '[', ']', '@', ' ', '+', 'a', 'Z', '0', '\u00e9', '\ud800') }),
);
const param = fc.tuple(fc.constantFrom(...PARAM_NAMES), anyText).map(([k, v]) => `${k}=${v}`);
const urlLike = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc
    .tuple(fc.constantFrom(...SCHEMES), fc.oneof(fc.constantFrom(...HOSTS), anyText), fc.constantFrom(':443', ':99999', ''), anyText, fc.array(param, { maxLength: 5 }))
    .map(([scheme, host, port, path, params]) => `${scheme}${host}${port}/${path}?${params.join('&')}`),
  anyText,
);
const field = fc.oneof(urlLike, fc.constant(null), fc.constant(undefined), fc.constant(''));
const input: fc.Arbitrary<ClassifyInput> = fc.record({ url: field, referrer: field, requestHost: fc.oneof(fc.constantFrom(...HOSTS), anyText, fc.constant(null)) }, { requiredKeys: [] });

function checkResult(result: ClassifiedSource): void {
  expect(RULE_IDS).toContain(result.rule_id);
  expect(result.confidence).toBe(CONFIDENCE[result.rule_id]);
  const medium = FIXED_MEDIUM[result.rule_id];
  if (medium !== undefined) expect(result.medium).toBe(medium);
  expect(typeof result.source).toBe('string');
  expect(result.source.length).toBeGreaterThan(0);
  expect(result.medium.length).toBeGreaterThan(0);
  if ('campaign' in result) {
    expect(typeof result.campaign).toBe('string');
    expect(result.campaign).toBe(result.campaign?.trim());
    expect(result.campaign?.length).toBeGreaterThan(0);
  }
  expect(Object.keys(result).every((k) => ['source', 'medium', 'campaign', 'confidence', 'rule_id'].includes(k))).toBe(true);
}

describe('classify on random input', () => {
  it('never throws and always returns a well-formed result', () => {
    fc.assert(
      fc.property(input, (i) => {
        // The unguarded core must not throw on its own (the guard in classify is for hostile objects only).
        const result = classifyUnguarded(i);
        checkResult(result);
        expect(classify(i)).toStrictEqual(result);
      }),
      { numRuns: 5000 },
    );
  });

  it('is deterministic', () => {
    fc.assert(
      fc.property(input, (i) => {
        expect(classifyUnguarded(i)).toStrictEqual(classifyUnguarded(i));
      }),
      { numRuns: 500 },
    );
  });

  it('gives rule-13 slugs made of [a-z0-9-] only', () => {
    fc.assert(
      fc.property(fc.oneof(fc.webUrl(), urlLike), (referrer) => {
        const r = classifyUnguarded({ url: 'https://site.example/', referrer });
        if (r.rule_id === 'referral') expect(r.source).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
      }),
      { numRuns: 2000 },
    );
  });
});
