import request from 'supertest';
import type { Express } from 'express';
import { createEnricher } from '@analytics/enrichment';
import { DAY_MS, type EventRow, eventInputSchema } from '@analytics/schema';

/** A tiny seeded PRNG (mulberry32): the same seed gives the same data set on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export { DAY_MS };
export const HOUR_MS = 3_600_000;
/** First day of the data set, a Monday, so week buckets start on it and again 7 and 14 days later. */
export const D0 = Date.UTC(2026, 2, 2);
export const DAYS = 14;
export const SITE_HOST = 'shop.example.com';
const SITE = `https://${SITE_HOST}`;

// Caller IPs geoip-lite places in different countries; loopback (no X-Forwarded-For) has none.
const IPS = ['81.2.69.160', '8.8.8.8', '5.9.0.1', '133.242.0.1', '200.160.2.3', '193.51.224.1', undefined] as const;
const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
];
// Entry traffic: the same network's paid (cpc, fbclid) and social referrals, search, paid search, email, direct, referral.
const ENTRIES: ReadonlyArray<{ query: string; referrer?: string }> = [
  { query: '?utm_source=facebook&utm_medium=cpc&utm_campaign=spring', referrer: 'https://www.facebook.com/' },
  { query: '?fbclid=fb1', referrer: 'https://l.facebook.com/' },
  { query: '', referrer: 'https://www.facebook.com/' },
  { query: '', referrer: 'https://m.facebook.com/' },
  { query: '', referrer: 'https://www.google.com/' },
  { query: '?gclid=g1', referrer: 'https://www.google.com/' },
  { query: '?utm_source=newsletter&utm_medium=email&utm_campaign=march', referrer: undefined },
  { query: '', referrer: undefined },
  { query: '', referrer: 'https://blog.example.org/post' },
  { query: '', referrer: 'https://t.co/abc' },
  { query: '', referrer: 'https://chatgpt.com/' },
  { query: '?utm_source=perplexity.ai', referrer: undefined },
];
const PAGES = ['/', '/pricing', '/docs', '/blog/launch', '/signup'];
const LATER_EVENTS = ['$pageview', '$pageview', '$pageview', 'clicked_pricing', 'signup', 'purchase'];

/** Raw inputs of one POST /v1/batch: one visitor (or, for bulk projects, one crowd) behind one IP and user agent. */
export interface SeededBatch {
  project: string;
  ip: string | undefined;
  userAgent: string;
  events: Array<Record<string, unknown>>;
}

export interface DatasetShape {
  /** Visitors with 1-3 sessions of 1-8 events each. */
  visitors: number;
  /** Extra visitors with one event each, to push distinct counts past the sketch's exact range. */
  crowd?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Generates a project's events: sessions spanning midnight and hour edges, client and derived session ids,
 * user-id-only server events, paths and no paths, several countries and devices.
 */
export function generateProject(project: string, shape: DatasetShape, rand: () => number): SeededBatch[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const batches: SeededBatch[] = [];
  let seq = 0;
  const eventId = () => `${project}-${String(seq++).padStart(6, '0')}`;

  for (let v = 0; v < shape.visitors; v++) {
    const anon = `${project}-anon-${v}`;
    const userId = rand() < 0.3 ? `${project}-user-${v}` : undefined;
    const events: Array<Record<string, unknown>> = [];
    const sessions = 1 + Math.floor(rand() * 3);
    for (let s = 0; s < sessions; s++) {
      const day = Math.floor(rand() * DAYS);
      const shapeRoll = rand();
      let t =
        shapeRoll < 0.15 ? D0 + day * DAY_MS + DAY_MS - Math.floor(rand() * 15 * 60_000) - 1 // minutes before midnight
        : shapeRoll < 0.25 ? D0 + day * DAY_MS + Math.floor(rand() * 24) * HOUR_MS + HOUR_MS - Math.floor(rand() * 120_000) - 1 // just before an hour edge
        : D0 + day * DAY_MS + Math.floor(rand() * DAY_MS);
      // A client's own id, one in the server's form (`<id>-<30-minute bucket of the first event>`, as a visit by
      // inactivity stores it: such a visit may run past midnight on that id), or none (the clock-bucket id).
      const idRoll = rand();
      const sessionId = idRoll < 0.45 ? `${anon}-s${s}` : idRoll < 0.6 ? `${anon}-${Math.floor(t / 1_800_000)}` : undefined;
      const entry = pick(ENTRIES);
      let page = pick(PAGES);
      const count = 1 + Math.floor(rand() * 8);
      for (let e = 0; e < count; e++) {
        const name = e === 0 ? '$pageview' : pick(LATER_EVENTS);
        const known = userId !== undefined && e > 0;
        if (name === 'purchase' && known && rand() < 0.5) {
          // a server-side event: user id only, no url (null path), no anonymous id
          events.push({ event: name, event_id: eventId(), timestamp: iso(t), user_id: userId, properties: { amount: Math.floor(rand() * 100) } });
        } else {
          const prev = page;
          page = e === 0 ? page : pick(PAGES);
          events.push({
            event: name,
            event_id: eventId(),
            timestamp: iso(t),
            anonymous_id: anon,
            ...(known ? { user_id: userId } : {}),
            ...(sessionId ? { session_id: sessionId } : {}),
            url: `${SITE}${page}${e === 0 ? entry.query : ''}`,
            ...(e === 0 ? (entry.referrer ? { referrer: entry.referrer } : {}) : { referrer: `${SITE}${prev}` }),
            properties: { step: e },
          });
        }
        t += 1000 + Math.floor(rand() * 15 * 60_000);
      }
    }
    batches.push({ project, ip: pick(IPS), userAgent: pick(USER_AGENTS), events });
  }

  const crowd = shape.crowd ?? 0;
  for (let start = 0; start < crowd; start += 1000) {
    const events = Array.from({ length: Math.min(1000, crowd - start) }, (_, i) => ({
      event: '$pageview',
      event_id: eventId(),
      timestamp: iso(D0 + Math.floor(rand() * DAYS * DAY_MS)),
      anonymous_id: `${project}-crowd-${start + i}`,
      url: `${SITE}${pick(PAGES)}${pick(ENTRIES).query}`,
    }));
    batches.push({ project, ip: pick(IPS), userAgent: pick(USER_AGENTS), events });
  }
  return batches;
}

/** Sends the batches through the real ingest path (POST /v1/batch), a few at a time. */
export async function ingestBatches(ingestApp: Express, keyOf: (project: string) => string, batches: SeededBatch[], concurrency = 8): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const b = batches[next++]!;
      const req = request(ingestApp).post('/v1/batch').set('authorization', `Bearer ${keyOf(b.project)}`).set('host', SITE_HOST).set('user-agent', b.userAgent);
      if (b.ip) req.set('x-forwarded-for', b.ip);
      const res = await req.send({ events: b.events });
      if (res.status !== 202) throw new Error(`ingest failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** The rows the ingest path stores for the batches, enriched by the same library (classifier, geo, user agent). */
export function enrichBatches(batches: SeededBatch[], projectIdOf: (project: string) => string): EventRow[] {
  return batches.flatMap((b) => {
    const enrich = createEnricher({ projectId: projectIdOf(b.project), ip: b.ip ?? '127.0.0.1', userAgent: b.userAgent, host: SITE_HOST, nowMs: D0, ipHashSecret: 'unused' });
    return b.events.map((e) => enrich(eventInputSchema.parse(e)));
  });
}
