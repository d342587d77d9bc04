import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Express } from 'express';
import { DEFAULT_FAILED_AUTH_LIMITS } from '@analytics/service-kit';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';

// Failed authentications on the whole service (real stores, the apps' wiring): an existing key prefix's failures are
// charged to that prefix, everything else's to the client IP, so one bad actor behind a shared address (an office NAT)
// locks out neither the others behind it nor a key's legitimate users. Callers are told apart by X-Forwarded-For.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-failed-auth', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal-failed-auth' };
// Small budgets; 429s never held (the hold has its own test in service-kit).
const LIMITS = { ...DEFAULT_FAILED_AUTH_LIMITS, perIp: { ratePerS: 0.01, burst: 5 }, perKey: { ratePerS: 0.01, burst: 3 }, immediateRefusals: { ratePerS: 1, burst: 1_000 } };
const RANGE = { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' };
const base62 = (n: number) => randomBytes(n * 2).toString('base64').replace(/[^0-9A-Za-z]/g, '').slice(0, n).padEnd(n, 'a');
const randomKey = () => `sk_live_${base62(12)}_${base62(32)}`;
/** The key with the same kind, environment and prefix, and another secret. */
const wrongSecretOf = (key: string) => `${key.split('_').slice(0, 3).join('_')}_${base62(32)}`;

let stores: Stores;
let app: Express;

beforeAll(async () => {
  stores = await openTestStores();
});
afterAll(() => stores.close());
beforeEach(() => {
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, trustProxy: ['loopback'], limits: { failedAuth: LIMITS } });
});

const track = (ip: string, key: string) => request(app).post('/v1/track').set('x-forwarded-for', ip).set('authorization', `Bearer ${key}`).send({ event: 'failed-auth' });
const query = (ip: string, key: string) => request(app).get('/v1/query').query(RANGE).set('x-forwarded-for', ip).set('authorization', `Bearer ${key}`);

describe('failed authentications behind one shared address', () => {
  it('limits a client flooding unknown random keys from a NAT while a colleague with valid keys keeps getting 202 and 200', async () => {
    const { keys } = await stores.keyStore.createProject({ name: 'office' });
    const NAT = '198.51.100.77';
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await track(NAT, randomKey())).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const limited = await track(NAT, randomKey());
    expect(limited.body).toEqual({ error: 'rate_limited', retry_after_s: expect.any(Number) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    expect((await track(NAT, keys.sk)).status).toBe(202);
    expect((await query(NAT, keys.rk)).status).toBe(200);
    // Anything from that address that is not a valid key of an existing prefix is refused: a malformed key, the admin
    // token or internal secret, no credential, and a wrong secret of an existing prefix.
    expect((await track(NAT, 'not-a-key')).status).toBe(429);
    expect((await request(app).get('/admin/projects').set('x-forwarded-for', NAT).set('authorization', `Bearer ${SECRETS.ADMIN_TOKEN}`)).status).toBe(429);
    expect((await request(app).post('/v1/track').set('x-forwarded-for', NAT).send({ event: 'x' })).status).toBe(429);
    expect((await track(NAT, wrongSecretOf(keys.sk))).status).toBe(429);
    // Another address is not affected.
    expect((await track('203.0.113.78', randomKey())).status).toBe(401);
  });

  it("charges wrong secrets of an existing prefix to the prefix: past its budget they are 429 from any address, the right secret still works, and the address's budget is untouched", async () => {
    const { keys } = await stores.keyStore.createProject({ name: 'guessed' });
    const ATTACKER = '198.51.100.90';
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await track(ATTACKER, wrongSecretOf(keys.sk))).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect((await track('203.0.113.91', wrongSecretOf(keys.sk))).status).toBe(429); // the prefix's budget, wherever from
    expect((await track(ATTACKER, keys.sk)).status).toBe(202);
    expect((await track('203.0.113.92', keys.sk)).status).toBe(202);
    // Other prefixes of the project have their own budgets.
    expect((await query(ATTACKER, wrongSecretOf(keys.rk))).status).toBe(401);
    expect((await query(ATTACKER, keys.rk)).status).toBe(200);
    // None of it was charged to the attacker's address: its full budget of unknown-key failures is left.
    const unknown: number[] = [];
    for (let i = 0; i < 6; i++) unknown.push((await track(ATTACKER, randomKey())).status);
    expect(unknown).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('charges a wrong admin token and a wrong internal secret to the address, and spares a valid key from it', async () => {
    const { keys } = await stores.keyStore.createProject({ name: 'admin-guess' });
    const IP = '198.51.100.95';
    const admin = () => request(app).get('/admin/projects').set('x-forwarded-for', IP).set('authorization', 'Bearer not-the-admin-token');
    // A valid key riding along does not move an internal secret's failure off the address.
    const internal = () => request(app).post('/internal/retention/run').set('x-forwarded-for', IP).set('x-internal-secret', 'nope').set('authorization', `Bearer ${keys.sk}`);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await admin()).status);
    for (let i = 0; i < 3; i++) statuses.push((await internal()).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await track(IP, keys.sk)).status).toBe(202);
  });
});
