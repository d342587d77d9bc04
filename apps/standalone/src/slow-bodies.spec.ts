import type { Server } from 'node:http';
import { bodyBudgetOf } from '@analytics/service-kit';
import { openTestStores, silentLogger, slowBody } from '@analytics/testing';
import { buildApp } from './app';
import { closeServer, listen, urlOf } from './test-service';

// Issue 43's slow bodies on real sockets: two connections of project A declare the largest body (16 MiB) and send a
// byte at a time. The body budget counts bytes as they arrive, so they hold a few bytes, not 32 MiB: project B's
// track and insights are served meanwhile, and each slow body is refused 408 request_timeout at BODY_READ_TIMEOUT_MS,
// its connection closed and its bytes released (the budget gauge back to 0).
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-slow', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal-slow' };
const RANGE = { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' };
const ORIGIN = 'https://a.example.com';
const ATTACKER = { Origin: ORIGIN, 'X-Forwarded-For': '198.51.100.66' };
const READ_TIMEOUT_MS = 1_500;
// Generous: what a loaded 2-core machine needs to answer one small request, not a speed bound.
const PROMPT_MS = 5_000;

let stores: Stores;
let server: Server;
let base: string;
let a: { pk: string };
let b: { sk: string; rk: string };

beforeAll(async () => {
  stores = await openTestStores();
  const limits = { body: { budget: bodyBudgetOf(32 * 1024 * 1024), waitMs: 2_000, readTimeoutMs: READ_TIMEOUT_MS } };
  // Behind a trusted proxy on loopback: the attacker and the bystander are different client addresses.
  const app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, limits, trustProxy: ['loopback'] });
  server = await listen(app);
  base = urlOf(server);
  a = (await stores.keyStore.createProject({ name: 'attacker', allowed_origins: [ORIGIN] })).keys;
  b = (await stores.keyStore.createProject({ name: 'bystander' })).keys;
});
afterAll(async () => {
  await closeServer(server);
  await stores.close();
});

const budgetInUse = async () => Number(/^analytics_body_budget_bytes_in_use (\d+)$/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1]);

/** A request's status and how long it took. */
async function timed(path: string, key: string, body: unknown): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.7' };
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return { status: res.status, ms: Date.now() - started };
}

describe('slow bodies', () => {
  it("two slow 16 MiB senders of one project hold only the bytes they sent: another project's track and insights are served, the senders get 408 request_timeout and the budget returns to 0", async () => {
    const slow = [0, 1].map(() => slowBody(base, '/v1/track', a.pk, { everyMs: 100, headers: ATTACKER }));
    try {
      let held = 0;
      for (const started = Date.now(); held === 0 && Date.now() - started < PROMPT_MS; ) held = await budgetInUse();
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThan(64 * 1024); // what arrived, not the 2 x 16 MiB declared

      const track = await timed('/v1/track', b.sk, { event: 'bystander', anonymous_id: 'b-1' });
      expect(track.status).toBe(202);
      expect(track.ms).toBeLessThan(PROMPT_MS);
      const insights = await timed('/v1/insights', b.rk, { ...RANGE, metrics: ['visitors'] });
      expect(insights.status).toBe(200);
      expect(insights.ms).toBeLessThan(PROMPT_MS);

      await Promise.all(slow.map((s) => s.whenClosed));
      for (const s of slow) {
        expect(s.status).toBe(408);
        expect(s.body).toMatchObject({ error: 'request_timeout' });
        expect(s.closed).toBe(true);
      }
      expect(await budgetInUse()).toBe(0);
    } finally {
      for (const s of slow) s.stop();
    }
  });

  it("a sender that sends most of the largest body and stalls holds at most its project's share: another project is served, and its bytes are released at the 408", async () => {
    const budget = bodyBudgetOf(32 * 1024 * 1024);
    // 15 MiB at once, then a byte every 100 ms: at most 16 MiB (the share) of this project and this address.
    const stalling = [0, 1].map(() => slowBody(base, '/v1/track', a.pk, { first: 15 * 1024 * 1024, everyMs: 100, headers: ATTACKER }));
    try {
      await new Promise((r) => setTimeout(r, 500));
      expect(await budgetInUse()).toBeLessThanOrEqual(budget.share);
      const track = await timed('/v1/track', b.sk, { event: 'bystander', anonymous_id: 'b-2' });
      expect(track.status).toBe(202);
      expect(track.ms).toBeLessThan(PROMPT_MS);
      await Promise.all(stalling.map((s) => s.whenClosed));
      // Each either got its bytes in and stalled (408), or was still waiting for room in the share at its
      // deadline (503 server_busy: the wait was ours, not its client's).
      for (const s of stalling) expect([408, 503]).toContain(s.status);
      expect(await budgetInUse()).toBe(0);
    } finally {
      for (const s of stalling) s.stop();
    }
  });
});
