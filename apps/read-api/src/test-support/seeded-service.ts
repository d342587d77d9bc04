import request from 'supertest';
import type { Express } from 'express';
import { buildApp as buildIngestApp } from '@analytics/ingest-api';
import { IngestService } from '@analytics/ingest';
import type { EventRow } from '@analytics/schema';
import { type ContractCheck, contractChecked, openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from '../app';
import { type DatasetShape, enrichBatches, generateProject, ingestBatches, seededRandom } from './seeded-dataset';

export type Stores = Awaited<ReturnType<typeof openTestStores>>;

export interface SeededService<N extends string> {
  stores: Stores;
  /** The read API over the stores. */
  readApp: Express;
  /** Every stored event as the ingest path enriched it, to compute expected answers from. */
  rows: EventRow[];
  ids: Record<N, string>;
  /** Each project's rk_ key. */
  rk: Record<N, string>;
}

export interface ReadService {
  stores: Stores;
  /** The ingest API over the stores, rate limits out of the way: how the specs write their events. */
  ingestApp: Express;
  /** The read API over the same stores. */
  readApp: Express;
}

/** The site the hand-made specs' events come from (allowed origin of their projects). */
export const ORIGIN = 'https://shop.example.com';
/** User agents the hand-made specs send: a desktop browser, and a crawler (device_type `bot`). */
export const UA = {
  chrome: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
} as const;

/** POST /v1/batch through the ingest API as a browser at `ip` with `ua` would send it; expects its 202. */
export async function sendBatch(ingestApp: Express, sk: string, events: object[], { ua = UA.chrome, ip = '81.2.69.160' }: { ua?: string; ip?: string } = {}): Promise<void> {
  const res = await request(ingestApp).post('/v1/batch').set('authorization', `Bearer ${sk}`).set('x-forwarded-for', ip).set('user-agent', ua).send({ events });
  expect(res.status).toBe(202);
}

/** Real stores (`env`: their settings, as openTestStores takes them), the ingest API and the read API over them. */
export async function openReadService(env: Parameters<typeof openTestStores>[0] = {}): Promise<ReadService> {
  const stores = await openTestStores(env);
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } } });
  const ingestApp = buildIngestApp({ logger: silentLogger, trustProxy: ['loopback'], authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's' });
  return { stores, ingestApp, readApp: buildApp({ logger: silentLogger, authenticator: stores.authenticator, events: stores.events, saved: stores.keyStore.lookup, annotations: stores.keyStore.annotations }) };
}

/** A project's keys as createProject answers them. */
export type Keys = { pk: string; sk: string; rk: string };

/**
 * What the hand-made endpoint specs share: openReadService, the read API behind the contract check (every answer
 * checked against its declared schema; `app` is the checked one), and a project per name allowing ORIGIN.
 */
export async function openCheckedReadService<N extends string>(...names: N[]): Promise<ReadService & { contract: ContractCheck; app: Express; keys: Record<N, Keys> }> {
  const opened = await openReadService();
  const contract = contractChecked(opened.readApp);
  const keys = {} as Record<N, Keys>;
  for (const name of names) keys[name] = (await opened.stores.keyStore.createProject({ name, allowed_origins: [ORIGIN] })).keys;
  return { ...opened, contract, app: contract.app, keys };
}

/**
 * Real stores with one project per entry of `projects`, their seeded events sent through the real ingest path (rate
 * limits out of the way), and the read API over them: what the correctness specs compare with plain TypeScript answers.
 */
export async function openSeededService<N extends string>(projects: Record<N, DatasetShape>, seed: number): Promise<SeededService<N>> {
  const { stores, ingestApp, readApp } = await openReadService();
  const ids = {} as Record<N, string>;
  const rk = {} as Record<N, string>;
  const sk = {} as Record<N, string>;
  for (const name of Object.keys(projects) as N[]) {
    const p = await stores.keyStore.createProject({ name, allowed_origins: [] });
    ids[name] = p.project.id;
    sk[name] = p.keys.sk;
    rk[name] = p.keys.rk;
  }
  const rand = seededRandom(seed);
  const batches = (Object.entries(projects) as Array<[N, DatasetShape]>).flatMap(([name, shape]) => generateProject(name, shape, rand));
  await ingestBatches(ingestApp, (p) => sk[p as N], batches);
  return { stores, readApp, rows: enrichBatches(batches, (p) => ids[p as N]), ids, rk };
}

/**
 * openSeededService for a whole spec file: opened before its tests (120 s allowed) and closed after them. The returned
 * object is filled in by the spec's beforeAll, so its fields are read inside tests, never at the top of the file.
 */
export function seededSuite<N extends string>(projects: Record<N, DatasetShape>, seed: number): SeededService<N> {
  const seeded = {} as SeededService<N>;
  beforeAll(async () => {
    Object.assign(seeded, await openSeededService(projects, seed));
  }, 120_000);
  afterAll(() => seeded.stores.close());
  return seeded;
}
