import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The revocation epoch: one value that every change which must refuse a cached key at once (a key revoked, a project's
 * origins or retention changed) replaces after the change is committed and before its admin route answers. A cached
 * key is used only while the epoch read for the request still equals the one read before the key was looked up;
 * otherwise it is looked up again. So once the admin route answered, every instance refuses the key on its next
 * request: no message has to reach it, and a lookup that was in flight during the change cannot be trusted afterwards.
 */
export interface RevocationEpoch {
  /** The current value, from a read that began after this call; throws when it cannot be read. */
  read(): Promise<string>;
  /** Replaces the value: every read that begins after this resolves sees the new one. Throws when it could not. */
  advance(): Promise<void>;
}

/** One process, no Redis: the admin routes and the key cache share the value in memory. */
export class LocalRevocationEpoch implements RevocationEpoch {
  private value = randomUUID();

  read(): Promise<string> {
    return Promise.resolve(this.value);
  }

  advance(): Promise<void> {
    this.value = randomUUID();
    return Promise.resolve();
  }
}

export const REVOCATION_EPOCH_KEY = 'analytics:auth-epoch';

/** Thrown by RedisRevocationEpoch.read while the key is missing (a Redis restarted empty); the caller re-reads its store. */
export class EpochUnknownError extends Error {
  constructor() {
    super('revocation epoch not set yet');
    this.name = 'EpochUnknownError';
  }
}

export interface RedisRevocationEpochOptions {
  /** The Redis key (REVOCATION_EPOCH_KEY); tests isolate themselves with their own. */
  key?: string;
  /** How long advance() keeps trying while Redis does not answer (a reconnect), before it throws. */
  advanceTimeoutMs?: number;
}

/**
 * The epoch in Redis, shared by every instance: GET on each use of a cached key, SET by the admin routes. Values are
 * random, never a counter: a Redis that restarted empty can never hand back an old value a stale entry still carries.
 */
export class RedisRevocationEpoch implements RevocationEpoch {
  private readonly key: string;
  private readonly advanceTimeoutMs: number;
  /** The GET on the wire, and the one that goes out once it is answered. */
  private sent: Promise<string> | undefined;
  private queued: Promise<string> | undefined;

  constructor(
    private readonly redis: Redis,
    options: RedisRevocationEpochOptions = {},
  ) {
    this.key = options.key ?? REVOCATION_EPOCH_KEY;
    this.advanceTimeoutMs = options.advanceTimeoutMs ?? 2_000;
  }

  read(): Promise<string> {
    // Concurrent requests share one GET, but only one sent after they arrived: a GET already on the wire may have been
    // answered before the SET of a revocation whose answer these requests were sent after.
    if (!this.sent) return this.send();
    this.queued ??= this.sent.then(noop, noop).then(() => {
      this.queued = undefined;
      return this.send();
    });
    return this.queued;
  }

  private send(): Promise<string> {
    const get = this.redis.get(this.key).then((value) => {
      if (value !== null) return value;
      // Missing: set a fresh value for the next reads (whoever sets it first wins); this read knows nothing yet.
      void this.redis.set(this.key, randomUUID(), 'NX').catch(noop);
      throw new EpochUnknownError();
    });
    this.sent = get;
    const clear = () => {
      if (this.sent === get) this.sent = undefined;
    };
    get.then(clear, clear);
    return get;
  }

  async advance(): Promise<void> {
    const until = Date.now() + this.advanceTimeoutMs;
    for (;;) {
      try {
        await this.redis.set(this.key, randomUUID());
        return;
      } catch (e) {
        if (Date.now() >= until) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

const noop = () => undefined;
