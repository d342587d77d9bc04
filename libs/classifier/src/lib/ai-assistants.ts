/**
 * AI assistants (../data/ai-assistants.json): which referrer host, Android app or utm_source names one. The
 * classifier's rules do not know them (they stay what rules 6-13 make of them); the channel does.
 */
import assistants from '../data/ai-assistants.json';
import { createHostMatcher } from './host-matcher';
import { hostOf, parseUrlLoose } from './parse';

export interface AiAssistantEntry {
  /** Stable lowercase slug (chatgpt, perplexity, claude, gemini, copilot, ...). */
  readonly name: string;
  readonly domains: readonly string[];
  /** utm_source values (lowercase) that name it besides its domains. */
  readonly utm_sources: readonly string[];
  readonly android_apps?: readonly string[];
}

export const AI_ASSISTANTS: readonly AiAssistantEntry[] = Object.freeze((assistants as readonly AiAssistantEntry[]).map((a) => Object.freeze(a)));

const matcher = createHostMatcher({ social: [], search: [], email: [], referral: AI_ASSISTANTS });
const byUtmSource = new Map<string, string>();
for (const a of AI_ASSISTANTS) for (const s of a.utm_sources) byUtmSource.set(s, a.name);

const SCHEME_OR_PATH = /[:/]/;

/** The assistant a lowercase host name (no port, no trailing dot) belongs to, by longest matching suffix. */
export function aiAssistantOfHost(host: string): string | undefined {
  return matcher.lookupHost(host.startsWith('www.') ? host.slice(4) : host)?.name;
}

/** The assistant of a parsed referrer URL: an http(s) host or an android-app:// package; undefined otherwise. */
export function aiAssistantOfUrl(url: URL): string | undefined {
  if (url.protocol === 'https:' || url.protocol === 'http:') return aiAssistantOfHost(hostOf(url));
  return url.protocol === 'android-app:' ? matcher.lookupAndroidApp(hostOf(url))?.name : undefined;
}

/**
 * The AI assistant a referrer host, a referrer URL (http(s) or android-app://) or a utm_source value names, as a
 * stable slug; undefined when none. Case and surrounding spaces are ignored; a subdomain counts (labs.perplexity.ai).
 */
export function aiAssistantOf(hostOrUtmSource: string | null | undefined): string | undefined {
  if (typeof hostOrUtmSource !== 'string') return undefined;
  const value = hostOrUtmSource.trim().toLowerCase();
  if (value === '') return undefined;
  const named = byUtmSource.get(value);
  if (named !== undefined) return named;
  if (!SCHEME_OR_PATH.test(value)) return aiAssistantOfHost(value.endsWith('.') ? value.slice(0, -1) : value);
  const url = parseUrlLoose(value);
  return url === undefined ? undefined : aiAssistantOfUrl(url);
}

/**
 * The AI assistant a stored `source` names: a utm_source value (`chatgpt.com`, `perplexity`) or rule 13's slug of a
 * referrer host (`chatgpt-com`, `chat-openai-com`: dots became dashes; no assistant domain has a dash of its own).
 */
export function aiAssistantOfSource(source: string | null | undefined): string | undefined {
  if (typeof source !== 'string') return undefined;
  return aiAssistantOf(source) ?? (source.includes('-') && !source.includes('.') ? aiAssistantOf(source.replaceAll('-', '.')) : undefined);
}
