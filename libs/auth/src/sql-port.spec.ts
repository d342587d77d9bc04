import net from 'node:net';
import { UpstreamUnavailableError } from '@analytics/schema';
import { createPgPort } from './sql-port';
import { POSTGRES, systemServer } from './test-servers';

const PG = systemServer(POSTGRES);

async function listen(onConnection: (s: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

describe('createPgPort when PostgreSQL cannot be reached', () => {
  it('reports a server that accepts and never answers as unreachable (UpstreamUnavailableError -> 502), not as a 500', async () => {
    const sockets: net.Socket[] = [];
    const hole = await listen((s) => sockets.push(s));
    const db = await createPgPort(`postgres://u@127.0.0.1:${portOf(hole)}/db`);
    try {
      const started = Date.now();
      const error = await db.query('SELECT 1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamUnavailableError);
      expect((error as UpstreamUnavailableError).store).toBe('key store');
      expect(Date.now() - started).toBeLessThan(6_000); // connectionTimeoutMillis, never a hang
      await expect(db.transaction(async (tx) => tx.query('SELECT 1'))).rejects.toBeInstanceOf(UpstreamUnavailableError);
    } finally {
      sockets.forEach((s) => s.destroy());
      hole.close();
      await db.close();
    }
  });

  it('reports a connection cut mid-conversation as unreachable', async () => {
    const cut = await listen((s) => s.destroy());
    const db = await createPgPort(`postgres://u@127.0.0.1:${portOf(cut)}/db`);
    try {
      await expect(db.query('SELECT 1')).rejects.toBeInstanceOf(UpstreamUnavailableError);
    } finally {
      cut.close();
      await db.close();
    }
  });

  PG.it('keeps errors the server answered with as they are (real PostgreSQL)', async () => {
    const db = await createPgPort(PG.url!);
    try {
      const error = await db.query('SELECT * FROM no_such_table_here').catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(UpstreamUnavailableError);
      expect((error as { code?: string }).code).toBe('42P01');
    } finally {
      await db.close();
    }
  });
});
