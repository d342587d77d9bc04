/**
 * The channel of a classified event: one of ten fixed values that group sources the way site owners ask about
 * them (docs/api/ingest.md, "Channels, host lists and bots"). Computed from classify()'s result plus the same input; classify() itself is unchanged.
 */
import { CHANNEL_VALUES } from '@analytics/schema';
import { aiAssistantOf, aiAssistantOfHost, aiAssistantOfUrl } from './ai-assistants';
import { HOST_LISTS, lookupHost } from './hosts';
import { parsePathOnly, parseUrlLoose, plainWebHost, readQuery } from './parse';
import type { ClassifiedSource, ClassifyInput } from './types';

/** The ten channels, as libs/schema's catalog lists them for the read API, OpenAPI and MCP (declared there once). */
export const CHANNELS = Object.freeze(CHANNEL_VALUES);

export type Channel = (typeof CHANNELS)[number];

type Network = 'search' | 'social';

/** Our list names (google, bing, facebook, tiktok, ...) by network. */
const NETWORK_OF_NAME = new Map<string, Network>();
for (const list of ['search', 'social'] as const) for (const e of HOST_LISTS[list]) NETWORK_OF_NAME.set(e.name, list);
/** Short or ad-product utm_source values that name a network. */
const NETWORK_ALIASES: ReadonlyMap<string, Network> = new Map<string, Network>([
  ['adwords', 'search'],
  ['gads', 'search'],
  ['microsoft', 'search'],
  ['msads', 'search'],
  ['fb', 'social'],
  ['ig', 'social'],
  ['meta', 'social'],
  ['x', 'social'],
  ['tw', 'social'],
  ['li', 'social'],
  ['yt', 'social'],
  ['snap', 'social'],
]);
const ADS_SUFFIX = /[\s_-]*ads?$/;

const ORGANIC_MEDIA: ReadonlySet<string> = new Set(['organic', 'search', 'seo', 'organic_search', 'organic-search', 'organic search']);
const SOCIAL_MEDIA: ReadonlySet<string> = new Set([
  'social',
  'social-network',
  'social_network',
  'social network',
  'social-media',
  'social_media',
  'social media',
  'sm',
  'organic_social',
  'organic-social',
]);
const EMAIL_MEDIA: ReadonlySet<string> = new Set(['email', 'e-mail', 'e_mail', 'mail', 'newsletter']);
/** Paid by its name (what rule 4 does not already take): anything with "cp" (cpv, cpa), ppc, paid*, and display formats. */
const PAID_MEDIUM = /^(?:.*cp.*|ppc|paid.*|banner|interstitial|expandable)$/;

/** search or social when a utm_source value (or a rule's source name) names a network, else undefined. */
function networkOf(source: string): Network | undefined {
  const direct = NETWORK_OF_NAME.get(source) ?? NETWORK_ALIASES.get(source);
  if (direct !== undefined) return direct;
  const bare = source.replace(ADS_SUFFIX, '');
  const named = NETWORK_OF_NAME.get(bare) ?? NETWORK_ALIASES.get(bare);
  if (named !== undefined) return named;
  if (source.includes('.')) {
    const entry = lookupHost(source.startsWith('www.') ? source.slice(4) : source);
    if (entry !== undefined && (entry.list === 'search' || entry.list === 'social')) return entry.list;
  }
  return undefined;
}

function paidChannel(source: string, medium: string | undefined): Channel {
  if (medium !== undefined) {
    if (medium.includes('social')) return 'paid_social';
    if (medium.includes('search')) return 'paid_search';
  }
  const network = networkOf(source);
  return network === 'search' ? 'paid_search' : network === 'social' ? 'paid_social' : 'paid_other';
}

function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** utm_medium of the page URL (lowercased), read only for rule 4, whose result keeps just "paid". */
function utmMediumOf(input: ClassifyInput): string | undefined {
  const raw = asString(input?.url);
  if (raw === '') return undefined;
  const page = parsePathOnly(raw) ?? parseUrlLoose(raw);
  return page === undefined ? undefined : readQuery(page.search).utmMedium;
}

/** The AI assistant the referrer names (web host or Android app), if any. */
function referrerAssistant(input: ClassifyInput): string | undefined {
  const raw = asString(input?.referrer);
  if (raw === '') return undefined;
  const host = plainWebHost(raw);
  if (host !== undefined) return aiAssistantOfHost(host);
  const url = parseUrlLoose(raw);
  return url === undefined ? undefined : aiAssistantOfUrl(url);
}

/**
 * The channel of an event from classify()'s result and the input it was given. Paid rules (1-5) and internal /
 * direct keep their channel; otherwise a referrer or utm_source naming an AI assistant gives `ai_assistant`;
 * otherwise the medium decides. Never throws.
 */
export function channelOf(classified: ClassifiedSource, input: ClassifyInput): Channel {
  switch (classified.rule_id) {
    case 'internal':
      return 'internal';
    case 'direct':
      return 'direct';
    case 'click_id':
    case 'fbclid_ad_referrer':
    case 'fbclid_utm_source':
    case 'fbclid_only':
      return paidChannel(classified.source, undefined);
    case 'paid_utm_medium':
      return paidChannel(classified.source, utmMediumOf(input));
    default:
      break;
  }
  const utmSource = classified.rule_id === 'utm_source' ? classified.source : undefined;
  if ((utmSource !== undefined && aiAssistantOf(utmSource) !== undefined) || referrerAssistant(input) !== undefined) return 'ai_assistant';
  switch (classified.rule_id) {
    case 'facebook_referrer':
    case 'social_referrer':
      return 'organic_social';
    case 'search_referrer':
      return 'organic_search';
    case 'email_referrer':
      return 'email';
    case 'utm_source':
      break;
    default:
      return 'referral';
  }
  const medium = classified.medium;
  if (ORGANIC_MEDIA.has(medium)) return 'organic_search';
  if (SOCIAL_MEDIA.has(medium)) return 'organic_social';
  if (EMAIL_MEDIA.has(medium)) return 'email';
  if (PAID_MEDIUM.test(medium)) return paidChannel(classified.source, medium);
  return 'referral';
}
