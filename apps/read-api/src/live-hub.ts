import { ApiError, type LiveMessage } from '@analytics/schema';
import type { Logger } from '@analytics/service-kit';

/** GET /v1/live's settings (LIVE_MAX_PER_PROJECT; the tick and ping intervals only tests change). */
export interface LiveOptions {
  /** Open streams per project on this instance; one more is answered 429 rate_limited. */
  maxPerProject: number;
  /** How often a message goes out (5 s). */
  tickMs?: number;
  /** Retry-After of the 429 past the bound, in seconds. */
  retryAfterS?: number;
}

export const LIVE_TICK_MS = 5_000;
export const DEFAULT_LIVE_MAX_PER_PROJECT = 5;

/** One open stream: what it is sent, and whether its key still reads (re-checked every tick: revocation ends it). */
export interface LiveClient {
  send(chunk: string): void;
  /** Resolves when the key still authenticates; rejects with the ApiError that refuses it. */
  recheck(): Promise<void>;
  /** Ends the stream (the key was refused, or the instance closes the hub). */
  end(): void;
}

interface ProjectFeed {
  clients: Set<LiveClient>;
  timer: NodeJS.Timeout;
  /** Half-ticks counted: even ones send a message, odd ones a ping. */
  step: number;
  last?: string;
  running: boolean;
}

/** A message of the stream: one `data:` line of JSON (JSON has no raw newline), then the blank line that ends it. */
export const messageChunk = (message: LiveMessage): string => `data: ${JSON.stringify(message)}\n\n`;
export const PING_CHUNK = ': ping\n\n';

/**
 * The live streams of this instance, grouped by project: one snapshot read per project per tick whatever the number of
 * its streams (each gets the same message), started with the project's first stream and stopped with its last. Half a
 * tick after each message a `: ping` comment goes out, so an idle proxy or a slow read never leaves the connection
 * silent for long. Before each message every stream's key is checked again (a cached check: the revocation epoch), and
 * a stream whose key no longer reads is ended with an `event: error` message naming the code.
 */
export class LiveHub {
  private readonly feeds = new Map<string, ProjectFeed>();
  private readonly tickMs: number;

  constructor(
    private readonly snapshot: (projectId: string) => Promise<LiveMessage>,
    private readonly options: LiveOptions,
    private readonly logger?: Logger,
  ) {
    this.tickMs = options.tickMs ?? LIVE_TICK_MS;
  }

  /** Open streams of a project on this instance. */
  openStreams(projectId: string): number {
    return this.feeds.get(projectId)?.clients.size ?? 0;
  }

  /**
   * Adds a stream of `projectId` (throws 429 rate_limited past LIVE_MAX_PER_PROJECT, before anything is sent); it gets
   * the project's newest message at once (a first read when it is the first stream). Returns what removes it.
   */
  add(projectId: string, client: LiveClient): () => void {
    let feed = this.feeds.get(projectId);
    if (feed && feed.clients.size >= this.options.maxPerProject) {
      throw new ApiError('rate_limited', { retry_after_s: this.options.retryAfterS ?? 30, details: { message: `at most ${this.options.maxPerProject} live streams per project (LIVE_MAX_PER_PROJECT)` } });
    }
    if (!feed) {
      const created: ProjectFeed = { clients: new Set(), step: 0, running: false, timer: setInterval(() => this.step(projectId, created), Math.max(1, Math.floor(this.tickMs / 2))) };
      created.timer.unref();
      feed = created;
      this.feeds.set(projectId, feed);
      feed.clients.add(client);
      void this.tick(projectId, feed);
    } else {
      feed.clients.add(client);
      if (feed.last !== undefined) client.send(feed.last);
    }
    const owner = feed;
    return () => this.remove(projectId, owner, client);
  }

  /** Ends every stream (the instance stops). */
  close(): void {
    for (const [projectId, feed] of this.feeds) for (const client of [...feed.clients]) {
      client.end();
      this.remove(projectId, feed, client);
    }
  }

  private remove(projectId: string, feed: ProjectFeed, client: LiveClient): void {
    feed.clients.delete(client);
    if (feed.clients.size > 0 || this.feeds.get(projectId) !== feed) return;
    clearInterval(feed.timer);
    this.feeds.delete(projectId);
  }

  private step(projectId: string, feed: ProjectFeed): void {
    feed.step++;
    if (feed.step % 2 === 0) void this.tick(projectId, feed);
    else for (const client of feed.clients) client.send(PING_CHUNK);
  }

  /** One tick: the keys checked again, one read, the message to every stream still open. A read still running skips it. */
  private async tick(projectId: string, feed: ProjectFeed): Promise<void> {
    if (feed.running) return;
    feed.running = true;
    try {
      await Promise.all(
        [...feed.clients].map((client) =>
          client.recheck().catch((e: unknown) => {
            const code = e instanceof ApiError ? e.code : 'internal_error';
            client.send(`event: error\ndata: ${JSON.stringify({ error: code })}\n\n`);
            client.end();
            this.remove(projectId, feed, client);
          }),
        ),
      );
      if (feed.clients.size === 0) return;
      const chunk = messageChunk(await this.snapshot(projectId));
      feed.last = chunk;
      for (const client of feed.clients) client.send(chunk);
    } catch (e) {
      // A failed read (the gate full, the store away): the streams stay open, pinged, and the next tick tries again.
      this.logger?.warn({ path: '/v1/live', project_id: projectId, err: e }, 'live snapshot failed');
    } finally {
      feed.running = false;
    }
  }
}
