import { lookupAndroidApp, lookupHost, type HostEntry } from './hosts';
import {
  EMPTY_QUERY,
  hostOf,
  normalizeRequestHost,
  parsePathOnly,
  parseUrlLoose,
  readQuery,
  slugifyHost,
  stripWww,
  type QueryInfo,
} from './parse';
import type { ClassifiedSource, ClassifyInput, Confidence, RuleId } from './types';

const PAID_MEDIA: ReadonlySet<string> = new Set(['cpc', 'paid', 'paid_social', 'cpm', 'display', 'retargeting']);
const FACEBOOK_AD_REFERRERS: ReadonlySet<string> = new Set(['l.facebook.com', 'lm.facebook.com']);

/** A usable referrer. */
interface Referrer {
  /** Lowercased host (web) or Android package name (app); never empty. */
  readonly host: string;
  /** true for http(s) referrers, false for android-app:// ones. */
  readonly web: boolean;
  /** The list entry the host (or package) belongs to, if any. */
  readonly entry: HostEntry | undefined;
}

function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * A usable referrer, or null. http(s) URLs (also scheme-less "host.tld/..."
 * and "//host/...") are web referrers; android-app://<package> is an app
 * referrer; anything else (invalid, empty, about:, file:, chrome-extension:, ...) is none.
 */
function resolveReferrer(raw: string): Referrer | null {
  if (raw === '') return null;
  const url = parseUrlLoose(raw);
  if (url === undefined) return null;
  const protocol = url.protocol;
  if (protocol === 'https:' || protocol === 'http:') {
    const host = hostOf(url);
    return host === '' ? null : { host, web: true, entry: lookupHost(host) };
  }
  if (protocol === 'android-app:') {
    const pkg = hostOf(url);
    return pkg === '' ? null : { host: pkg, web: false, entry: lookupAndroidApp(pkg) };
  }
  return null;
}

/** The name rules 7-10/13 give a referrer (used by rule 4 when utm_source is absent). */
function referrerName(ref: Referrer | null): string {
  if (ref === null) return 'unknown';
  const entry = ref.entry;
  if (entry !== undefined) {
    if (entry.list === 'social' || entry.list === 'search') return entry.name;
    if (entry.list === 'email') return 'email';
  }
  return slugifyHost(ref.host) || 'unknown';
}

function result(
  source: string,
  medium: string,
  confidence: Confidence,
  rule_id: RuleId,
  campaign: string | undefined,
): ClassifiedSource {
  return campaign === undefined
    ? { source, medium, confidence, rule_id }
    : { source, medium, campaign, confidence, rule_id };
}

/**
 * The classifier itself. Does not throw for any string / null / undefined
 * field values; `classify` adds a last-resort guard for hostile objects.
 */
export function classifyUnguarded(input: ClassifyInput): ClassifiedSource {
  const rawUrl = asString(input?.url);
  const rawReferrer = asString(input?.referrer);

  // Page URL: parsed once. A path-only URL ("/p?x") gives a query but no host.
  let page: URL | undefined;
  let pageHasHost = false;
  if (rawUrl !== '') {
    page = parsePathOnly(rawUrl);
    if (page === undefined) {
      page = parseUrlLoose(rawUrl);
      pageHasHost = page !== undefined;
    }
  }
  const q: Readonly<QueryInfo> = page === undefined ? EMPTY_QUERY : readQuery(page.search);
  const campaign = q.utmCampaign;

  // 1. click ids
  if (q.gclid) return result('google', 'paid', 'high', 'click_id', campaign);
  if (q.msclkid) return result('bing', 'paid', 'high', 'click_id', campaign);
  if (q.ttclid) return result('tiktok', 'paid', 'high', 'click_id', campaign);
  if (q.liFatId) return result('linkedin', 'paid', 'high', 'click_id', campaign);

  const source = q.utmSource;
  const medium = q.utmMedium;
  // The referrer is parsed lazily (at most once): rules 3, 5 and 6 do not need it.
  let ref: Referrer | null | undefined;

  if (q.fbclid) {
    // 2. fbclid + Facebook's outbound link shim
    ref = resolveReferrer(rawReferrer);
    if (ref !== null && ref.web && FACEBOOK_AD_REFERRERS.has(stripWww(ref.host))) {
      return result('facebook', 'paid', 'high', 'fbclid_ad_referrer', campaign);
    }
    // 3. fbclid + a Meta utm_source
    if (source === 'facebook' || source === 'fb') return result('facebook', 'paid', 'high', 'fbclid_utm_source', campaign);
    if (source === 'instagram') return result('instagram', 'paid', 'high', 'fbclid_utm_source', campaign);
  }

  // 4. paid utm_medium
  if (medium !== undefined && PAID_MEDIA.has(medium)) {
    if (source !== undefined) return result(source, 'paid', 'high', 'paid_utm_medium', campaign);
    if (ref === undefined) ref = resolveReferrer(rawReferrer);
    return result(referrerName(ref), 'paid', 'high', 'paid_utm_medium', campaign);
  }

  // 5. fbclid alone
  if (q.fbclid && source === undefined) return result('facebook', 'paid', 'medium', 'fbclid_only', campaign);

  // 6. utm_source
  if (source !== undefined) return result(source, medium ?? 'referral', 'high', 'utm_source', campaign);

  if (ref === undefined) ref = resolveReferrer(rawReferrer);

  // 7-10. known referrers (longest matching suffix across all lists)
  if (ref !== null && ref.entry !== undefined) {
    const entry = ref.entry;
    switch (entry.list) {
      case 'social':
        return entry.name === 'facebook'
          ? result('facebook', 'social', 'medium', 'facebook_referrer', campaign)
          : result(entry.name, 'social', 'medium', 'social_referrer', campaign);
      case 'search':
        return result(entry.name, 'organic', 'medium', 'search_referrer', campaign);
      case 'email':
        return result('email', 'email', 'medium', 'email_referrer', campaign);
      case 'referral':
        break;
    }
  }

  // 11. internal navigation
  if (ref !== null && ref.web) {
    const requestHost = pageHasHost && page !== undefined ? hostOf(page) : '';
    const ownHost = requestHost !== '' ? requestHost : normalizeRequestHost(asString(input?.requestHost));
    if (ownHost !== '' && stripWww(ownHost) === stripWww(ref.host)) {
      return result('internal', 'direct', 'high', 'internal', campaign);
    }
  }

  // 12. direct (no click id can be left at this point: rules 1 and 5 took them)
  if (ref === null && !q.anyUtm) return result('direct', 'direct', 'high', 'direct', campaign);

  // 13. referral
  const slug = ref === null ? '' : slugifyHost(ref.host);
  return result(slug === '' ? 'unknown' : slug, 'referral', 'low', 'referral', campaign);
}

/** Classifies the traffic source of an event. Pure, cheap, never throws. */
export function classify(input: ClassifyInput): ClassifiedSource {
  try {
    return classifyUnguarded(input);
  } catch {
    // Only reachable with hostile inputs (e.g. a getter that throws).
    return { source: 'unknown', medium: 'referral', confidence: 'low', rule_id: 'referral' };
  }
}
