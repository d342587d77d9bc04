import { isbot, isbotMatch } from 'isbot';
import { AI_CRAWLERS } from './ai-crawlers';

/**
 * Bots, named. `isbot` (maintained pattern list) decides whether a User-Agent is a bot; this file names the bot and
 * keeps server-side HTTP libraries out: those are our `sk_` callers (servers tracking events), neither visitors'
 * browsers nor crawlers, although isbot's list includes them.
 */

/** Other bots worth a stable name (search engines, link previews, SEO tools, monitors, headless browsers). */
const OTHER_BOTS = [
  'Googlebot-Image',
  'Googlebot-News',
  'Googlebot-Video',
  'Googlebot',
  'Google-InspectionTool',
  'GoogleOther',
  'AdsBot-Google-Mobile',
  'AdsBot-Google',
  'Mediapartners-Google',
  'Storebot-Google',
  'APIs-Google',
  'FeedFetcher-Google',
  'bingbot',
  'BingPreview',
  'msnbot',
  'adidxbot',
  'DuckDuckBot',
  'YandexBot',
  'YandexImages',
  'Baiduspider',
  'Sogou web spider',
  '360Spider',
  'Yeti',
  'SeznamBot',
  'Applebot',
  'Qwantify',
  'facebookexternalhit',
  'Twitterbot',
  'LinkedInBot',
  'Slackbot',
  'Discordbot',
  'TelegramBot',
  'WhatsApp',
  'Pinterestbot',
  'redditbot',
  'Embedly',
  'AhrefsBot',
  'SemrushBot',
  'MJ12bot',
  'DotBot',
  'rogerbot',
  'Screaming Frog SEO Spider',
  'UptimeRobot',
  'Pingdom',
  'HeadlessChrome',
  'PhantomJS',
  'Chrome-Lighthouse',
  'Scrapy',
];

/** Server-side HTTP libraries and API tools, by the product token they start their User-Agent with. */
const SERVER_LIBRARIES = [
  'node-fetch',
  'node',
  'undici',
  'axios',
  'got',
  'Deno',
  'Bun',
  'curl',
  'Wget',
  'python-requests',
  'python-urllib',
  'python-httpx',
  'aiohttp',
  'Go-http-client',
  'okhttp',
  'Java',
  'Apache-HttpClient',
  'Dart',
  'GuzzleHttp',
  'ruby',
  'Faraday',
  'libwww-perl',
  'HTTPie',
  'PostmanRuntime',
  'RestSharp',
];

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Longest first, so Googlebot-Image wins over Googlebot and Applebot-Extended over Applebot at the same place. */
const alternation = (names: readonly string[]): string => [...names].sort((a, b) => b.length - a.length).map(escape).join('|');

const BOT_NAMES = new Map<string, string>([...AI_CRAWLERS.map((c) => c.name), ...OTHER_BOTS].map((n) => [n.toLowerCase(), n]));
const KNOWN_BOT = new RegExp(`(?<![a-z0-9])(${alternation([...BOT_NAMES.values()])})(?![a-z0-9])`, 'i');
const LIBRARY_NAMES = new Map(SERVER_LIBRARIES.map((n) => [n.toLowerCase(), n]));
// "Python/3.11 aiohttp/3.9" names the library second.
const SERVER_LIBRARY = new RegExp(`^(?:python/[\\d.]+\\s+)?(${alternation(SERVER_LIBRARIES)})(?=[/\\s;(]|$)`, 'i');
const TOKEN_BREAK = /[\s;(),]/;
const AI_CRAWLER_NAMES = new Set(AI_CRAWLERS.map((c) => c.name));

/** The server-side HTTP library a User-Agent names (curl, node, python-requests, ...), or undefined. */
export function serverLibraryOf(ua: string): string | undefined {
  const m = SERVER_LIBRARY.exec(ua);
  return m === null ? undefined : LIBRARY_NAMES.get(m[1]!.toLowerCase());
}

/** The product token around isbot's match (`Foobot/1.2` -> `Foobot`), for bots of no known name. */
function tokenAround(ua: string, match: string): string | undefined {
  const at = ua.indexOf(match);
  if (at < 0) return undefined;
  let start = at;
  let end = at + match.length;
  while (start > 0 && !TOKEN_BREAK.test(ua[start - 1]!)) start--;
  while (end < ua.length && !TOKEN_BREAK.test(ua[end]!)) end++;
  const token = ua.slice(start, end).split('/')[0]!.replace(/^[+\W_]+|[\W_]+$/g, '');
  return token === '' ? undefined : token.slice(0, 64);
}

/**
 * The bot's name when the User-Agent is a bot (isbot says so, or it carries a crawler name we know), else undefined.
 * Known names keep their own spelling (Googlebot, bingbot, GPTBot); others are the product token isbot matched.
 */
export function botNameOf(ua: string): string | undefined {
  const known = KNOWN_BOT.exec(ua);
  if (known !== null) return BOT_NAMES.get(known[1]!.toLowerCase());
  if (!isbot(ua)) return undefined;
  const match = isbotMatch(ua);
  return (match === null ? undefined : tokenAround(ua, match)) ?? 'unknown bot';
}

/** The crawler's name when a stored `browser` value is an AI company's crawler or fetcher (GPTBot, ClaudeBot, ...). */
export function aiCrawlerOf(browser: string | null | undefined): string | undefined {
  return typeof browser === 'string' && AI_CRAWLER_NAMES.has(browser) ? browser : undefined;
}
