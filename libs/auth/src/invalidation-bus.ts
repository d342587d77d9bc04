import type { Redis } from 'ioredis';
import type { Authenticator } from './authenticator';

export const INVALIDATION_CHANNEL = 'analytics:auth-invalidate';

type Message = { type: 'key'; prefix: string } | { type: 'project'; id: string } | { type: 'minted'; prefix: string };

/**
 * Key revocations and project changes published on a Redis channel: every instance drops the cached entry at
 * once (instead of after the cache TTL); minted keys join every instance's known-prefix set at once. Publishing
 * also applies the change locally, so it works without Redis.
 */
export class InvalidationBus {
  constructor(
    /** This instance's cache; admin-api alone has none and only publishes. */
    private readonly authenticator: Authenticator | undefined,
    private readonly publisher?: Redis,
    private readonly subscriber?: Redis,
  ) {}

  async start(): Promise<void> {
    if (!this.subscriber) return;
    this.subscriber.on('message', (channel: string, raw: string) => {
      if (channel !== INVALIDATION_CHANNEL) return;
      try {
        this.apply(JSON.parse(raw) as Message);
      } catch {
        // a malformed message is ignored; the TTL still bounds staleness
      }
    });
    await this.subscriber.subscribe(INVALIDATION_CHANNEL);
  }

  private apply(m: Message): void {
    if (m.type === 'key' && typeof m.prefix === 'string') this.authenticator?.invalidateKey(m.prefix);
    if (m.type === 'project' && typeof m.id === 'string') this.authenticator?.invalidateProject(m.id);
    if (m.type === 'minted' && typeof m.prefix === 'string') this.authenticator?.keyMinted(m.prefix);
  }

  private async publish(m: Message): Promise<void> {
    this.apply(m);
    // Best effort: when Redis is down, other instances still drop the entry within the cache TTL.
    await this.publisher?.publish(INVALIDATION_CHANNEL, JSON.stringify(m)).catch(() => undefined);
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
