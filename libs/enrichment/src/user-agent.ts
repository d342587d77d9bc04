import { LRUCache } from 'lru-cache';
import { UAParser } from 'ua-parser-js';

export type DeviceType = 'desktop' | 'mobile' | 'tablet' | 'bot' | 'other';

export interface DeviceInfo {
  device_type: DeviceType;
  browser: string;
  os: string;
}

export const UNKNOWN = 'unknown';

const BOT = /bot\b|bot\/|crawl|spider|slurp|headlesschrome|phantomjs|lighthouse|facebookexternalhit|embedly|preview|curl\/|wget\/|python-requests|python-urllib|go-http-client|okhttp|axios\/|node-fetch|java\/|libwww|httpclient|scrapy|monitor|pingdom|uptime/i;
const DESKTOP_OS = new Set(['Windows', 'Mac OS', 'macOS', 'Linux', 'Ubuntu', 'Debian', 'Fedora', 'Chrome OS', 'Chromium OS', 'FreeBSD', 'OpenBSD', 'NetBSD', 'Solaris', 'Mint', 'Arch', 'Gentoo', 'SUSE', 'Red Hat', 'CentOS', 'Manjaro', 'elementary OS', 'Kubuntu', 'Xubuntu', 'Zenwalk', 'Slackware', 'Mandriva', 'Unix']);

// User agents repeat heavily; parsing is the costliest part of enrichment, so results are memoised.
const cache = new LRUCache<string, DeviceInfo>({ max: 5_000 });

/**
 * device_type, browser and os from a User-Agent (ua-parser-js 1.x). Fallbacks: bots by pattern -> `bot`;
 * ua-parser's mobile/tablet -> same; no device type on a desktop OS -> `desktop`; anything else (TVs, consoles,
 * wearables, empty UA) -> `other`. Unknown browser or os -> `unknown`.
 */
export function parseUserAgent(ua: string | undefined): DeviceInfo {
  const key = ua ?? '';
  const hit = cache.get(key);
  if (hit) return hit;
  const r = new UAParser(key.slice(0, 1024)).getResult();
  const browser = r.browser.name || UNKNOWN;
  const os = r.os.name || UNKNOWN;
  let device_type: DeviceType;
  if (key && BOT.test(key)) device_type = 'bot';
  else if (r.device.type === 'mobile') device_type = 'mobile';
  else if (r.device.type === 'tablet') device_type = 'tablet';
  else if (!r.device.type && DESKTOP_OS.has(os)) device_type = 'desktop';
  else device_type = 'other';
  const info = { device_type, browser, os };
  cache.set(key, info);
  return info;
}
