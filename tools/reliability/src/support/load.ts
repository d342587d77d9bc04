import { type ProjectKeys, call } from './server';

export interface LoadTally {
  /** Client-set event_ids whose request was acknowledged (202/200). */
  ackedIds: Set<string>;
  /** Events acknowledged per project (track, batch and identify, which has no client event_id). */
  ackedEvents: Map<string, number>;
  /** Event ids sent in requests that were not acknowledged (4xx such as 429, or a cut connection). */
  statuses: Map<number, number>;
  networkErrors: number;
  requests: number;
}

export const newTally = (): LoadTally => ({ ackedIds: new Set(), ackedEvents: new Map(), statuses: new Map(), networkErrors: 0, requests: 0 });

const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
];

let seq = 0;
const event = (id: string, i: number) => ({
  event: i % 3 ? '$pageview' : 'signup',
  event_id: id,
  anonymous_id: `anon-${i % 97}`,
  user_id: i % 4 ? undefined : `user-${i % 13}`,
  url: `https://shop.example.com/p/${i % 7}?utm_source=${i % 2 ? 'newsletter' : 'x'}`,
  referrer: i % 5 ? 'https://www.google.com/' : undefined,
  properties: { i, plan: 'pro' },
});

/** One request of the mix (6 track : 1 batch of 1..50 : 1 identify), counted in `tally` once answered. */
export async function mixedRequest(base: string, project: ProjectKeys, tally: LoadTally, tag: string, extraHeaders: Record<string, string> = {}): Promise<void> {
  const n = seq++;
  const kind = n % 8 === 7 ? 'identify' : n % 8 === 6 ? 'batch' : 'track';
  const headers = { 'user-agent': UAS[n % UAS.length]!, ...extraHeaders };
  let ids: string[] = [];
  let events = 0;
  let path: string;
  let body: unknown;
  if (kind === 'track') {
    ids = [`${tag}-${n}`];
    events = 1;
    path = '/v1/track';
    body = event(ids[0]!, n);
  } else if (kind === 'batch') {
    const size = 1 + (n % 50);
    ids = Array.from({ length: size }, (_, i) => `${tag}-${n}-${i}`);
    events = size;
    path = '/v1/batch';
    body = { events: ids.map((id, i) => event(id, n + i)) };
  } else {
    events = 1;
    path = '/v1/identify';
    body = { anonymous_id: `anon-${n % 97}`, user_id: `user-${n % 13}`, traits: { plan: 'pro' } };
  }
  tally.requests++;
  let status: number;
  try {
    status = (await call(base, 'POST', path, { key: project.sk, body, headers })).status;
  } catch {
    tally.networkErrors++;
    return;
  }
  tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
  if (status === 202 || status === 200) {
    ids.forEach((id) => tally.ackedIds.add(id));
    tally.ackedEvents.set(project.id, (tally.ackedEvents.get(project.id) ?? 0) + events);
  }
}

/** `workers` concurrent loops of mixed requests until `stop()` says so or `ms` passed (bounded in time). */
export async function runLoad(opts: { base: string; projects: ProjectKeys[]; workers: number; ms: number; tally: LoadTally; tag: string; headers?: (n: number) => Record<string, string>; stop?: () => boolean }): Promise<void> {
  const until = Date.now() + opts.ms;
  await Promise.all(
    Array.from({ length: opts.workers }, async (_, w) => {
      let i = 0;
      while (Date.now() < until && !opts.stop?.()) {
        const project = opts.projects[(w + i) % opts.projects.length]!;
        await mixedRequest(opts.base, project, opts.tally, `${opts.tag}${w}`, opts.headers?.(w * 1_000_000 + i));
        i++;
      }
    }),
  );
}
