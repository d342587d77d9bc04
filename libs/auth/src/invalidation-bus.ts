import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Authenticator } from './authenticator';

export const INVALIDATION_CHANNEL = 'analytics:auth-invalidate';
/** Each bus that applied a message from INVALIDATION_CHANNEL publishes the message's id here. */
export const INVALIDATION_ACK_CHANNEL = 'analytics:auth-invalidate-ack';

/**
 * How long a publish waits for the acknowledgements of the instances that received it. A replica that died (or hung)
 * after receiving must not hold the admin request forever; past this bound the change is still applied by every live
 * replica that got it, and the cache TTL bounds the rest. 2 s is far above a loaded replica's apply-and-ack (a few ms).
 */
export const ACK_TIMEOUT_MS = 2_000;

type Change = { type: 'key'; prefix: string } | { type: 'project'; id: string } | { type: 'minted'; prefix: string };
type Message = Change & { id?: string };

interface Pending {
  acks: number;
  /** Set once PUBLISH answered how many subscribers received the message. */
  expected?: number;
  done: () => void;
}

export interface InvalidationBusOptions {
  /** Bound on the wait for acknowledgements (ACK_TIMEOUT_MS); tests shorten it. */
  ackTimeoutMs?: number;
  /** Told when the bound expires with acknowledgements missing. */
  logger?: { warn(details: object, message: string): void };
  /** The change channel (INVALIDATION_CHANNEL); its acks go to `${channel}-ack`. Tests isolate themselves with their own. */
  channel?: string;
}

/**
 * Key revocations and project changes published on a Redis channel: every instance drops the cached entry at
 * once (instead of after the cache TTL); minted keys join every instance's known-prefix set at once. Publishing
 * also applies the change locally, so it works without Redis.
 *
 * Acknowledged: each message carries a random id; a bus that applied one publishes the id on INVALIDATION_ACK_CHANNEL,
 * and the publishing bus resolves only once as many acks arrived as PUBLISH counted receivers (its own subscriber
 * among them), or after the bound. So an admin route answering after `keyRevoked()` answers once every replica
 * refuses the key. Redis failures are best effort: never thrown, never waited on past the bound.
 */
export class InvalidationBus {
  private readonly pending = new Map<string, Pending>();
  private readonly ackTimeoutMs: number;
  private readonly channel: string;
  private readonly ackChannel: string;
  /** Acks can arrive only once the subscriber listens on the ack channel; until then a publish does not wait. */
  private acksSubscribed = false;

  constructor(
    /** This instance's cache; admin-api alone has none and only publishes. */
    private readonly authenticator: Authenticator | undefined,
    private readonly publisher?: Redis,
    /** Receives the changes (when there is a cache to apply them to) and the acks of this bus's own publishes. */
    private readonly subscriber?: Redis,
    private readonly options: InvalidationBusOptions = {},
  ) {
    this.ackTimeoutMs = options.ackTimeoutMs ?? ACK_TIMEOUT_MS;
    this.channel = options.channel ?? INVALIDATION_CHANNEL;
    this.ackChannel = options.channel ? `${options.channel}-ack` : INVALIDATION_ACK_CHANNEL;
  }

  /** Subscribes (before any publish waits for acks); a failure is the caller's to log: the bus then works unacknowledged. */
  async start(): Promise<void> {
    if (!this.subscriber) return;
    this.subscriber.on('message', (channel: string, raw: string) => {
      if (channel === this.ackChannel) this.acked(raw);
      else if (channel === this.channel) this.received(raw);
    });
    // admin-api has no cache: it listens to the acks only, and is not counted among the receivers of a change.
    const channels = this.authenticator ? [this.channel, this.ackChannel] : [this.ackChannel];
    await this.subscriber.subscribe(...channels);
    this.acksSubscribed = true;
  }

  private received(raw: string): void {
    let m: Message;
    try {
      m = JSON.parse(raw) as Message;
      this.apply(m);
    } catch {
      return; // a malformed message is ignored; the TTL still bounds staleness
    }
    // Applied: acknowledge (best effort; the publisher's bound covers a lost ack).
    if (typeof m.id === 'string' && this.publisher) this.publisher.publish(this.ackChannel, m.id).catch(() => undefined);
  }

  private acked(id: string): void {
    const p = this.pending.get(id);
    if (!p) return; // another bus's publish
    p.acks++;
    if (p.expected !== undefined && p.acks >= p.expected) p.done();
  }

  private apply(m: Change): void {
    if (m.type === 'key' && typeof m.prefix === 'string') this.authenticator?.invalidateKey(m.prefix);
    if (m.type === 'project' && typeof m.id === 'string') this.authenticator?.invalidateProject(m.id);
    if (m.type === 'minted' && typeof m.prefix === 'string') this.authenticator?.keyMinted(m.prefix);
  }

  private async publish(change: Change): Promise<void> {
    this.apply(change);
    if (!this.publisher) return;
    const id = randomUUID();
    const message: Message = { ...change, id };
    if (!this.acksSubscribed) {
      // No ack can reach us: publish as before, without waiting.
      await this.publisher.publish(this.channel, JSON.stringify(message)).catch(() => undefined);
      return;
    }
    // Registered before PUBLISH: an ack may arrive before PUBLISH's own answer does.
    let timer: NodeJS.Timeout | undefined;
    const settled = new Promise<void>((resolve) => {
      const p: Pending = { acks: 0, done: () => resolve() };
      this.pending.set(id, p);
      timer = setTimeout(() => {
        this.options.logger?.warn(
          { acks: p.acks, expected: p.expected ?? null, timeoutMs: this.ackTimeoutMs, type: change.type },
          `invalidation acknowledged by ${p.acks} of ${p.expected ?? '?'} instances within ${this.ackTimeoutMs} ms; the others drop it within the cache TTL`,
        );
        resolve();
      }, this.ackTimeoutMs);
      timer.unref();
    });
    try {
      // Best effort: when Redis is down, other instances still drop the entry within the cache TTL.
      const receivers = await Promise.race([this.publisher.publish(this.channel, JSON.stringify(message)).catch(() => 0), settled.then(() => 0)]);
      const p = this.pending.get(id);
      if (p && p.expected === undefined) {
        p.expected = receivers;
        if (p.acks >= receivers) p.done();
      }
      await settled;
    } finally {
      clearTimeout(timer);
      this.pending.delete(id);
    }
  }

  keyRevoked(prefix: string): Promise<void> {
    return this.publish({ type: 'key', prefix });
  }

  keyMinted(prefix: string): Promise<void> {
    return this.publish({ type: 'minted', prefix });
  }

  projectChanged(id: string): Promise<void> {
    return this.publish({ type: 'project', id });
  }
}
