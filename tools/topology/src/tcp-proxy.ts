import net from 'node:net';

/**
 * A TCP proxy between the service and a store, to cut, hold and restore on demand:
 * - `refuse`: the port stops listening (connection refused) and open connections are reset;
 * - `blackhole`: connections are accepted and never answered (a hung or partitioned store);
 * - `hold`: the store's answers wait in the proxy, in order, until `release` (a store or network slow to answer).
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private mode: 'pass' | 'blackhole' = 'pass';
  /** While holding: the store's answers not yet passed on, in arrival order. */
  private held: Array<() => void> | undefined;
  port = 0;

  private constructor(private readonly target: { host: string; port: number }) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await proxy.listen(0);
    return proxy;
  }

  private listen(port: number): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        this.port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  private accept(client: net.Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    if (this.mode === 'blackhole') return;
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (this.held) this.held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  private dropAll(): void {
    for (const s of this.sockets) s.resetAndDestroy();
    this.sockets.clear();
  }

  /** Store unreachable: `refuse` (nothing listens) or `blackhole` (accepts, never answers). */
  async cut(how: 'refuse' | 'blackhole' = 'refuse'): Promise<void> {
    this.dropAll();
    if (how === 'blackhole') {
      this.mode = 'blackhole';
      if (!this.server) await this.listen(this.port);
      return;
    }
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps the store's answers from here on (requests still reach it) until `release`. */
  hold(): void {
    this.held ??= [];
  }

  /** How many answer chunks are held (the store has answered that much since `hold`). */
  get heldChunks(): number {
    return this.held?.length ?? 0;
  }

  /** Passes the held answers on, in order, and every later one at once. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const write of held) write();
  }

  /** Store back, on the same port. */
  async restore(): Promise<void> {
    this.mode = 'pass';
    this.release();
    this.dropAll();
    if (!this.server) await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.cut('refuse');
  }
}

export function hostPortOf(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || (u.protocol.startsWith('redis') ? 6379 : 5432)) };
}

/** The same URL pointing at the proxy. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
