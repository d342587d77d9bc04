import { LRUCache } from 'lru-cache';
import { ApiError, type AuthContext, type KeyAccess, LIMITS } from '@analytics/schema';
import { type BucketRule, MemoryRateLimiter } from '@analytics/service-kit';
import { type KeyKind, parsePresentedKey, verifySecret } from './key-format';
import type { KeyRecord, KeyStore, Project } from './key-store';
import { originAllowed } from './origin';
import { LocalRevocationEpoch, type RevocationEpoch } from './revocation-epoch';

/** What a request is allowed to do, by the endpoint it calls. */
export type Access = KeyAccess;

export type { AuthContext };

const SCOPES: Record<KeyKind, string> = { pk: 'ingest', sk: 'ingest', rk: 'read', ak: 'admin' };

/** The scope a key kind carries (`got` in insufficient_scope errors). */
export const scopeOf = (kind: KeyKind): string => SCOPES[kind];
/** The scope an access requires (`required` in insufficient_scope errors). */
export const requiredScope = (access: Access): string => (access === 'forget' ? 'ingest' : access);

// Which key kinds each access admits. `ak_` (admin) also ingests and forgets, as the MCP contract's "sk_ or admin key".
const ALLOWED: Record<Access, readonly KeyKind[]> = {
  ingest: ['pk', 'sk', 'ak'],
  read: ['rk'],
  forget: ['sk', 'ak'],
  // Annotations (issue 48): the project's secret keys only; a pk_ key is public in its pages.
  annotate: ['sk', 'ak'],
};

export interface AuthenticatorOptions {
  /** Cache TTL for resolved keys, at most the spec's 5 minutes; 0 caches nothing. */
  ttlMs?: number;
  max?: number;
  clock?: () => number;
  /** Told each accepted key's prefix (KeyUsage records when keys were last used). */
  onKeyUsed?: (prefix: string) => void;
  /** Checked on every use of a cached key (RedisRevocationEpoch across instances); default: this process's own. */
  epoch?: RevocationEpoch;
}

// Prefixes outside the known set are refused without a lookup, except this trickle: a key minted a moment ago on
// another instance (its announcement still on the way) still works, and a flood of random keys costs at most this.
const UNKNOWN_LOOKUPS: BucketRule = { ratePerS: 5, burst: 10 };
// Incremental reloads re-read this much before the newest key seen (clock skew between writers).
const RELOAD_OVERLAP_MS = 60_000;

/** A found key remembers the revocation epoch read before it was looked up (undefined: it could not be read). */
type CacheEntry = { key: KeyRecord; project: Project; epoch: string | undefined } | { missing: true };

const bearerToken = (authorization: string | undefined) => (authorization ? /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization)?.[1] : undefined);

/** Resolves `Authorization: Bearer` keys to projects: parse, cached lookup by prefix, constant-time secret check, scope, origin. */
export class Authenticator {
  private readonly cache: LRUCache<string, CacheEntry>;
  /** KEY_CACHE_TTL_MS=0: every request looks its key up (lru-cache reads a ttl of 0 as "never expires"). */
  private readonly caching: boolean;
  private readonly missingTtlMs: number;
  private readonly epoch: RevocationEpoch;
  /** Counts keyMinted calls: a lookup that answered "missing" while one arrived is not cached. */
  private mints = 0;
  /** Every prefix that exists, once loaded: unknown ones are refused without a key-store round trip. */
  private known: Set<string> | undefined;
  private knownUntil = 0;
  private reloadTimer: NodeJS.Timeout | undefined;
  private readonly buckets: MemoryRateLimiter;
  private readonly clock: () => number;
  private readonly onKeyUsed: ((prefix: string) => void) | undefined;

  constructor(private readonly store: KeyStore, options: AuthenticatorOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.onKeyUsed = options.onKeyUsed;
    const ttl = Math.min(options.ttlMs ?? LIMITS.keyCacheTtlMs, LIMITS.keyCacheTtlMs);
    this.caching = ttl > 0;
    this.missingTtlMs = Math.min(ttl, 10_000);
    this.cache = new LRUCache<string, CacheEntry>({ max: options.max ?? 50_000, ttl: Math.max(ttl, 1), ttlAutopurge: false });
    this.epoch = options.epoch ?? new LocalRevocationEpoch();
    this.buckets = new MemoryRateLimiter(options.clock);
    store.onMinted((prefix) => this.keyMinted(prefix));
  }

  /**
   * Loads every existing prefix, then keeps the set current: keys minted through this process's key store or
   * announced by other instances (keyMinted) join at once, and a reload every `reloadMs` catches the rest.
   */
  async loadKnownPrefixes(reloadMs: number): Promise<void> {
    await this.reloadKnownPrefixes();
    clearInterval(this.reloadTimer);
    this.reloadTimer = setInterval(() => void this.reloadKnownPrefixes().catch(() => undefined), reloadMs);
    this.reloadTimer.unref();
  }

  private async reloadKnownPrefixes(): Promise<void> {
    const since = this.known ? new Date(this.knownUntil - RELOAD_OVERLAP_MS) : undefined;
    const rows = await this.store.listPrefixes(since);
    const known = this.known ?? new Set<string>();
    for (const { prefix, created_at } of rows) {
      known.add(prefix);
      this.knownUntil = Math.max(this.knownUntil, created_at.getTime());
    }
    this.known = known;
  }

  /** A key minted here or on another instance: it authenticates at once. */
  keyMinted(prefix: string): void {
    this.mints++;
    this.known?.add(prefix);
    const entry = this.cache.get(prefix);
    if (entry && 'missing' in entry) this.cache.delete(prefix);
  }

  stop(): void {
    clearInterval(this.reloadTimer);
  }

  /** Readiness of the key store behind this authenticator. */
  ping(): Promise<void> {
    return this.store.ping();
  }

  /** Drops one key from this instance's cache (revocation). */
  invalidateKey(prefix: string): void {
    this.cache.delete(prefix);
  }

  /** Drops every cached key of a project (origins or retention changed). */
  invalidateProject(projectId: string): void {
    for (const [prefix, entry] of this.cache.entries()) {
      if ('key' in entry && entry.key.project_id === projectId) this.cache.delete(prefix);
    }
  }

  /**
   * The cached key only while the revocation epoch is the one it was looked up under, else a lookup. Messages that drop
   * entries (InvalidationBus) can arrive late, get lost in a reconnect, or overtake a lookup in flight, which would then
   * cache the record it read before the change; the epoch, replaced after every such change is committed and before
   * the admin route answers, is read again for each request, so none of these lets a revoked key through afterwards.
   */
  private async lookup(prefix: string): Promise<CacheEntry> {
    const cached = this.cache.get(prefix);
    // A missing prefix stays refused whatever a revocation does; keys minted meanwhile drop it (keyMinted).
    if (cached && 'missing' in cached) return cached;
    if (!cached && this.known && !this.known.has(prefix) && !this.buckets.takeSync('unknown-prefix', UNKNOWN_LOOKUPS).allowed) return { missing: true };
    // Unreadable (Redis down): nothing cached is trusted, each request reads the key store.
    const epoch = await this.epoch.read().catch(() => undefined);
    if (cached && epoch !== undefined && cached.epoch === epoch) return cached;
    const mints = this.mints;
    const found = await this.store.findKey(prefix);
    if (!found) {
      if (this.caching && this.mints === mints) this.cache.set(prefix, { missing: true }, { ttl: this.missingTtlMs });
      return { missing: true };
    }
    const entry: CacheEntry = { ...found, epoch };
    if (this.caching) this.cache.set(prefix, entry);
    return entry;
  }

  /**
   * The prefix of the key an Authorization header presents when that prefix exists (known, or its key cached), without
   * a lookup: failed authentications of an existing prefix are budgeted per prefix, not per client IP.
   */
  knownPrefix(authorization: string | undefined): string | undefined {
    const token = bearerToken(authorization);
    const prefix = token === undefined ? undefined : parsePresentedKey(token)?.prefix;
    if (prefix === undefined) return undefined;
    const cached = this.cache.peek(prefix);
    return this.known?.has(prefix) || (cached !== undefined && 'key' in cached) ? prefix : undefined;
  }

  /** Resolves the raw Authorization header to its key and project; throws the spec's 401 ApiErrors. */
  async resolve(authorization: string | undefined): Promise<AuthContext> {
    const token = bearerToken(authorization);
    if (token === undefined) throw new ApiError('missing_bearer_token');
    const presented = parsePresentedKey(token);
    if (!presented) throw new ApiError('malformed_api_key');

    const entry = await this.lookup(presented.prefix);
    if ('missing' in entry) throw new ApiError('invalid_api_key');
    const { key, project } = entry;
    // A share's credential is presented as `shr_…` and only so: an rk_ form of it, or a shr_ form of a key, is unknown.
    if (!verifySecret(presented.secret, key.secret_hash) || key.revoked_at || key.env !== presented.env || presented.share !== (key.share !== null)) {
      throw new ApiError('invalid_api_key');
    }
    // A read key minted for a session (libs/accounts) ends at its expiry, cached or not.
    if (key.expires_at !== null && Date.parse(key.expires_at) <= this.clock()) throw new ApiError('invalid_api_key');
    if (key.kind !== presented.kind) throw new ApiError('key_kind_mismatch');
    this.onKeyUsed?.(key.prefix);
    return { projectId: project.id, project, kind: key.kind, prefix: key.prefix, ...(key.share ? { share: key.share } : {}) };
  }

  /** Checks a resolved key against an access (scope, then the Origin of pk_ keys); throws the spec's 403 ApiErrors. */
  authorize(ctx: AuthContext, access: Access, origin?: string, takesShare = false): AuthContext {
    // A share link's credential reads only the routes the shared dashboard needs (declared `share: true`).
    if (ctx.share && !takesShare) throw new ApiError('insufficient_scope', { required: requiredScope(access), got: 'share' });
    if (!ALLOWED[access].includes(ctx.kind)) {
      if (access === 'forget' && ctx.kind === 'pk') throw new ApiError('forget_requires_secret_key');
      throw new ApiError('insufficient_scope', { required: requiredScope(access), got: scopeOf(ctx.kind) });
    }
    if (ctx.kind === 'pk' && !originAllowed(origin, ctx.project.allowed_origins)) throw new ApiError('origin_not_allowed');
    return ctx;
  }

  /** Authenticates the raw Authorization header for an access; throws the spec's 401/403 ApiErrors. */
  async authenticate(authorization: string | undefined, access: Access, origin?: string, takesShare = false): Promise<AuthContext> {
    return this.authorize(await this.resolve(authorization), access, origin, takesShare);
  }
}
