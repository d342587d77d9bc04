import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { SESSION_BUCKET_MS } from '@analytics/enrichment';
import { type Logger, RedisOrMemory } from '@analytics/service-kit';

/**
 * Visits by inactivity (issue 47): the state that says which visit an event without `session_id` continues.
 *
 * One visitor's state is a few recent visits `{ b, f, l }`: the visit's id bucket (the 30-minute clock bucket of its
 * first event as first seen; it names the visit and never changes), and the times of its first and last events. An
 * event at `t` joins the visit whose span [f, l] it is within the idle time of (l - idle < t < f + idle, nearest span
 * first) as long as the visit then lasts less than the cap (24 h); otherwise it starts a visit of its own.
 */
export interface Visit {
  /** The id bucket: floor(first event's ms / 30 min), fixed when the visit is first seen. */
  b: number;
  /** Epoch ms of its earliest event. */
  f: number;
  /** Epoch ms of its latest event. */
  l: number;
}

/** A visit lasts less than this from its first event (the "at most 24 hours"). */
export const VISIT_CAP_MS = 24 * 3_600_000;
/** Visits kept per visitor: enough for events out of order (a retried batch) to find theirs. */
export const VISITS_KEPT = 4;

export interface VisitRules {
  idleMs: number;
  capMs: number;
}

/** The visit of `visits` an event at `t` continues, or undefined: within idle of its span, and the visit stays under the cap. */
export function visitOf(visits: readonly Visit[], t: number, { idleMs, capMs }: VisitRules): Visit | undefined {
  let best: Visit | undefined;
  let bestGap = Infinity;
  for (const v of visits) {
    const gap = t < v.f ? v.f - t : t > v.l ? t - v.l : 0;
    if (gap >= idleMs || Math.max(v.l, t) - Math.min(v.f, t) >= capMs) continue;
    if (gap < bestGap) {
      best = v;
      bestGap = gap;
    }
  }
  return best;
}

/** Adds `t` to the visit (its span grows; its id bucket stays). */
export function extend(v: Visit, t: number): void {
  if (t < v.f) v.f = t;
  if (t > v.l) v.l = t;
}

/** The newest visits only (by last event), at most VISITS_KEPT. */
export function pruned(visits: Visit[]): Visit[] {
  return visits.sort((a, b) => b.l - a.l).slice(0, VISITS_KEPT);
}

/**
 * One visitor's events of one request: `keys[0]` the visitor's state key, `keys[1]` (optional) the previous day's
 * key of the same caller (a daily visitor id that rotated at midnight): an event that continues none of `keys[0]`'s
 * visits but one of `keys[1]`'s stays in that one. `times` ascending.
 */
export interface VisitGroup {
  keys: readonly [string] | readonly [string, string];
  times: readonly number[];
}

/** Per time of a group: which key's visit it joined (0 or 1) and that visit's id bucket. */
export type Placement = [keyIndex: 0 | 1, bucket: number];

export interface VisitState {
  /** Places every group's events in visits, atomically per visitor; one round trip for the whole request. */
  place(groups: readonly VisitGroup[]): Promise<Placement[][]>;
}

/** The placement of one group over its visitors' visit lists (mutated): the one algorithm, mirrored by PLACE_SCRIPT. */
export function placeGroup(lists: [Visit[], Visit[] | undefined], times: readonly number[], rules: VisitRules): Placement[] {
  return times.map((t): Placement => {
    const own = visitOf(lists[0], t, rules);
    if (own) {
      extend(own, t);
      return [0, own.b];
    }
    const previous = lists[1] ? visitOf(lists[1], t, rules) : undefined;
    if (previous) {
      extend(previous, t);
      return [1, previous.b];
    }
    const v = { b: Math.floor(t / SESSION_BUCKET_MS), f: t, l: t };
    lists[0].push(v);
    return [0, v.b];
  });
}

/**
 * This process's visits (no REDIS_URL, or Redis not answering): an LRU of at most `max` visitors, each kept for the
 * cap plus the idle time after its last change. Lost on restart: a visitor's next event then starts a new visit.
 */
export class MemoryVisitState implements VisitState {
  private readonly visitors: LRUCache<string, Visit[]>;

  constructor(private readonly rules: VisitRules, max = 200_000) {
    this.visitors = new LRUCache<string, Visit[]>({ max, ttl: rules.capMs + rules.idleMs });
  }

  async place(groups: readonly VisitGroup[]): Promise<Placement[][]> {
    return this.placeNow(groups);
  }

  placeNow(groups: readonly VisitGroup[]): Placement[][] {
    return groups.map((g) => {
      const own = this.visitors.get(g.keys[0]) ?? [];
      const previous = g.keys[1] === undefined ? undefined : this.visitors.get(g.keys[1]);
      const out = placeGroup([own, previous], g.times, this.rules);
      this.visitors.set(g.keys[0], pruned(own));
      if (previous && g.keys[1] !== undefined && out.some(([k]) => k === 1)) this.visitors.set(g.keys[1], pruned(previous));
      return out;
    });
  }
}

// The same algorithm in Redis, atomic for all the request's visitors (one EVALSHA). ARGV: idle ms, cap ms, TTL ms, kept,
// then cjson [[key index 0, key index 1 or 0, [times]], ...]; answers cjson [[[which, bucket], ...], ...].
// Times are epoch ms: 13 digits, exact in Lua's doubles and in cjson's 14 significant digits.
const PLACE_SCRIPT = `
local idle = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local kept = tonumber(ARGV[4])
local groups = cjson.decode(ARGV[5])
local lists = {}
local dirty = {}
local function list(i)
  if lists[i] == nil then
    local raw = redis.call('GET', KEYS[i])
    lists[i] = raw and cjson.decode(raw) or {}
  end
  return lists[i]
end
local function visit_of(vs, t)
  local best, best_gap = nil, nil
  for _, v in ipairs(vs) do
    local gap = 0
    if t < v.f then gap = v.f - t elseif t > v.l then gap = t - v.l end
    if gap < idle and math.max(v.l, t) - math.min(v.f, t) < cap and (best_gap == nil or gap < best_gap) then
      best, best_gap = v, gap
    end
  end
  return best
end
local function extend(v, t)
  if t < v.f then v.f = t end
  if t > v.l then v.l = t end
end
local out = {}
for gi, g in ipairs(groups) do
  local own = list(g[1])
  local res = {}
  for ti, t in ipairs(g[3]) do
    local v = visit_of(own, t)
    if v then
      extend(v, t)
      res[ti] = {0, v.b}
    else
      local p = nil
      if g[2] > 0 then p = visit_of(list(g[2]), t) end
      if p then
        extend(p, t)
        dirty[g[2]] = true
        res[ti] = {1, p.b}
      else
        local b = math.floor(t / ${SESSION_BUCKET_MS})
        own[#own + 1] = {b = b, f = t, l = t}
        res[ti] = {0, b}
      end
    end
  end
  dirty[g[1]] = true
  out[gi] = res
end
for i, _ in pairs(dirty) do
  local vs = lists[i]
  table.sort(vs, function(a, b) return a.l > b.l end)
  local keep = {}
  for j = 1, math.min(#vs, kept) do keep[j] = vs[j] end
  redis.call('SET', KEYS[i], cjson.encode(keep), 'PX', ttl)
end
return cjson.encode(out)
`;

type PlaceCommand = { analyticsPlaceVisits: (...args: Array<string | number>) => Promise<string> };

/**
 * Visits shared by every ingest replica through Redis (REDIS_URL): one script call per request places the events of
 * all its visitors atomically. Keys are `prefix` + a keyed hash of (project, visitor id) (visitKeyOf), never the ids; each lives the cap
 * plus the idle time after its last change. While Redis cannot answer, this process's memory answers (logged once per
 * outage): a visit may then start anew, two visitors' events are never merged (their ids differ).
 */
export class RedisVisitState implements VisitState {
  private readonly shared: RedisOrMemory;
  private readonly fallback: MemoryVisitState;

  constructor(private readonly redis: Redis, private readonly rules: VisitRules, logger: Logger, private readonly prefix = 'analytics:visit:') {
    redis.defineCommand('analyticsPlaceVisits', { lua: PLACE_SCRIPT });
    this.fallback = new MemoryVisitState(rules);
    this.shared = new RedisOrMemory(logger, { unavailable: 'redis unavailable: visits continued from this process memory', recovered: 'redis visit state recovered' });
  }

  place(groups: readonly VisitGroup[]): Promise<Placement[][]> {
    if (groups.length === 0) return Promise.resolve([]);
    return this.shared.run(async () => {
      const keys: string[] = [];
      const index = new Map<string, number>();
      const at = (k: string) => {
        let i = index.get(k);
        if (i === undefined) {
          keys.push(this.prefix + k);
          i = keys.length;
          index.set(k, i);
        }
        return i;
      };
      const encoded = groups.map((g) => [at(g.keys[0]), g.keys[1] === undefined ? 0 : at(g.keys[1]), g.times]);
      const answer = await (this.redis as unknown as PlaceCommand).analyticsPlaceVisits(
        keys.length, ...keys, this.rules.idleMs, this.rules.capMs, this.rules.capMs + this.rules.idleMs, VISITS_KEPT, JSON.stringify(encoded),
      );
      return decodePlacements(answer, groups);
    }, () => this.fallback.placeNow(groups));
  }
}

/** The script's answer; cjson encodes an empty table as `{}`, a group without times. */
function decodePlacements(answer: string, groups: readonly VisitGroup[]): Placement[][] {
  const parsed = JSON.parse(answer) as unknown;
  const list = Array.isArray(parsed) ? parsed : [];
  return groups.map((g, i) => {
    const res = list[i];
    const placements = (Array.isArray(res) ? res : []) as Placement[];
    if (placements.length !== g.times.length) throw new Error('visit state: unexpected answer');
    return placements;
  });
}
