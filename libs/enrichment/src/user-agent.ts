import { LRUCache } from 'lru-cache';
import { UAParser } from 'ua-parser-js';
import { botNameOf, serverLibraryOf } from './bots';

export type DeviceType = 'desktop' | 'mobile' | 'tablet' | 'bot' | 'other';

export interface DeviceInfo {
  device_type: DeviceType;
  browser: string;
  os: string;
}

export const UNKNOWN = 'unknown';

const DESKTOP_OS = new Set(['Windows', 'Mac OS', 'macOS', 'Linux', 'Ubuntu', 'Debian', 'Fedora', 'Chrome OS', 'Chromium OS', 'FreeBSD', 'OpenBSD', 'NetBSD', 'Solaris', 'Mint', 'Arch', 'Gentoo', 'SUSE', 'Red Hat', 'CentOS', 'Manjaro', 'elementary OS', 'Kubuntu', 'Xubuntu', 'Zenwalk', 'Slackware', 'Mandriva', 'Unix']);

// User agents repeat heavily; parsing is the costliest part of enrichment, so results are memoised.
const cache = new LRUCache<string, DeviceInfo>({ max: 5_000 });

/**
 * device_type, browser and os from a User-Agent (ua-parser-js 1.x), in this order:
 * - a server-side HTTP library (curl, node, undici, python-requests, Go-http-client, ...) -> `other`, browser = the
 *   library: servers calling us with sk_ keys are neither visitors' browsers nor bots, and stay in default views;
 * - a bot (isbot, or a crawler name we know) -> `bot`, browser = the bot's name (Googlebot, GPTBot, HeadlessChrome);
 * - ua-parser's mobile/tablet -> same; no device type on a desktop OS -> `desktop`; anything else (TVs, consoles,
 *   wearables, empty UA) -> `other`. Unknown browser or os -> `unknown`.
 */
export function parseUserAgent(ua: string | undefined): DeviceInfo {
  const key = ua ?? '';
  const hit = cache.get(key);
  if (hit) return hit;
  const text = key.slice(0, 1024);
  const r = new UAParser(text).getResult();
  const os = r.os.name || UNKNOWN;
  const library = text !== '' ? serverLibraryOf(text) : undefined;
  const bot = text !== '' && library === undefined ? botNameOf(text) : undefined;
  let device_type: DeviceType;
  if (library !== undefined) device_type = 'other';
  else if (bot !== undefined) device_type = 'bot';
  else if (r.device.type === 'mobile') device_type = 'mobile';
  else if (r.device.type === 'tablet') device_type = 'tablet';
  else if (!r.device.type && DESKTOP_OS.has(os)) device_type = 'desktop';
  else device_type = 'other';
  const info = { device_type, browser: library ?? bot ?? (r.browser.name || UNKNOWN), os };
  cache.set(key, info);
  return info;
}
