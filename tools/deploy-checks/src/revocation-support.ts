import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { type Answer, http } from './http';

// What revocation.spec.ts and topology.spec.ts share: the real stores they need (a PostgreSQL schema of their own, a
// Redis that answers) and the request helpers.

export const ROOT = resolve(__dirname, '../../..');
export const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const ADMIN_TOKEN = randomBytes(16).toString('hex');

/**
 * A schema of its own on the real PostgreSQL (TEST_DATABASE_URL) and a check that the real Redis answers: when either
 * is down this throws, it never skips. Resolves with the URL confined to that schema and a function that drops it.
 */
export async function realStores(name: string): Promise<{ databaseUrl: string; drop: () => Promise<void> }> {
  const schema = `${name}_${randomBytes(6).toString('hex')}`;
  const pg = new Client({ connectionString: DATABASE_URL });
  try {
    await pg.connect();
  } catch (e) {
    throw new Error(`the ${name} check needs PostgreSQL at TEST_DATABASE_URL (${DATABASE_URL}): ${(e as Error).message}`);
  }
  await pg.query(`CREATE SCHEMA ${schema}`);
  await pg.end();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (e) {
    throw new Error(`the ${name} check needs Redis at TEST_REDIS_URL (${REDIS_URL}): ${(e as Error).message}`);
  } finally {
    redis.disconnect();
  }
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const drop = async () => {
    const admin = new Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  };
  return { databaseUrl: url.toString(), drop };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
export const post = (port: number, path: string, key: string, body: unknown): Promise<Answer> => http(port, 'POST', path, bearer(key), JSON.stringify(body));

export type Keys = { pk: string; sk: string; rk: string };

/** A new project through admin-api at `port`; its three keys. */
export async function createProject(port: number, name: string): Promise<Keys> {
  const r = await http(port, 'POST', '/admin/projects', bearer(ADMIN_TOKEN), JSON.stringify({ name }));
  if (r.status !== 201) throw new Error(`POST /admin/projects answered ${r.status}: ${r.body}`);
  return (r.json() as { keys: Keys }).keys;
}
