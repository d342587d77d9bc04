import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { Express } from 'express';
import { Accounts, type AccountsOptions, PasswordHasher, type UserCaller } from '@analytics/accounts';
import { type InvalidationBus, KeyStore, LocalRevocationEpoch, type SqlPort, migrateKeyStore } from '@analytics/auth';
import type { Role, User } from '@analytics/schema';
import { createLogger } from '@analytics/service-kit';
import { buildApp } from './app';
import type { AdminRouterDeps } from './admin.routes';
import { adminWiring } from './wiring';

export const ADMIN_TOKEN = 'admin-token-people-tests-0123456789';
export const PASSWORD = 'correct horse battery';
/** Cheap scrypt for tests: the parameters are stored with each hash, production uses OWASP's (password.ts). */
export const TEST_HASHER_PARAMS = { N: 1024, r: 8, p: 1 };

export interface People {
  db: SqlPort;
  keyStore: KeyStore;
  accounts: Accounts;
  app: Express;
  /** The organization "Default" of the setup. */
  orgId: string;
  /** A project of that organization. */
  projectId: string;
  users: Record<Role | 'outsider', User>;
  /** A fresh session token of a user (sessions are cheap: no password hashing). */
  tokenOf(who: Role | 'outsider'): Promise<string>;
  callerOf(who: Role | 'outsider'): Promise<UserCaller>;
  /** Adds a user with a role to an organization directly in the store. */
  addMember(orgId: string, role: Role, email?: string): Promise<User>;
  /** A new organization in which each of the four role users holds that role. */
  orgWithRoles(): Promise<string>;
  clock: { now: number };
}

export interface PeopleOptions extends Partial<Pick<AccountsOptions, 'hasher' | 'failures' | 'mailer' | 'publicUrl' | 'sessionIdleDays' | 'sessionMaxDays' | 'oidc'>> {
  bus?: InvalidationBus;
  trustProxy?: boolean | string[];
  /** The clock the accounts read (another part under test may share it). */
  clock?: { now: number };
  /** POST /admin/projects/{id}/import's writer (an event store's importEvents); unset: that route answers 503 not_ready. */
  importEvents?: AdminRouterDeps['importEvents'];
  /** The alerts' mail and address guard settings (unset: no mail, private addresses refused). */
  alertChannels?: AdminRouterDeps['alertChannels'];
  /** POST .../reports/{report_id}/send's mailer; unset: that route answers 503 not_ready. */
  reportPreview?: AdminRouterDeps['reportPreview'];
}

let counter = 0;
export const uniqueEmail = (what: string) => `${what}-${Date.now().toString(36)}-${counter++}@example.com`;

/**
 * admin-api on a migrated key store with the first user set up through POST /auth/setup and a member of each role in
 * its organization, plus an outsider (owner of another organization). The clock is the test's.
 */
export async function setUpPeople(db: SqlPort, options: PeopleOptions = {}): Promise<People> {
  await migrateKeyStore(db);
  const keyStore = new KeyStore(db);
  const clock = options.clock ?? { now: Date.now() };
  const accounts = new Accounts({
    db,
    keyStore,
    throttleSecret: 'people-tests',
    hasher: options.hasher ?? new PasswordHasher({ params: TEST_HASHER_PARAMS }),
    sessionIdleDays: options.sessionIdleDays,
    sessionMaxDays: options.sessionMaxDays,
    failures: options.failures,
    mailer: options.mailer,
    publicUrl: options.publicUrl,
    oidc: options.oidc,
    now: () => clock.now,
    onKeysRevoked: options.bus ? (prefix) => options.bus!.keyRevoked(prefix) : undefined,
  });
  const wiring = options.bus
    ? adminWiring({ keyStore, bus: options.bus, accounts, epoch: new LocalRevocationEpoch() }, ADMIN_TOKEN, { publicUrl: options.publicUrl, importEvents: options.importEvents, alertChannels: options.alertChannels, reportPreview: options.reportPreview })
    : { keyStore, accounts, adminToken: ADMIN_TOKEN, publicUrl: options.publicUrl, importEvents: options.importEvents, alertChannels: options.alertChannels, reportPreview: options.reportPreview };
  const app = buildApp({ logger: createLogger({ level: 'silent' }), trustProxy: options.trustProxy, ...wiring });
  const project = await request(app).post('/admin/projects').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({ name: 'before setup' });
  const setup = await request(app).post('/auth/setup').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({ email: uniqueEmail('owner'), password: PASSWORD, name: 'Owner' });
  if (setup.status !== 201) throw new Error(`setup answered ${setup.status} ${JSON.stringify(setup.body)}`);
  const orgId = String((await db.query<{ id: string }>("SELECT id FROM organizations WHERE name = 'Default'")).rows[0]!.id);

  const addMember = async (org: string, role: Role, email = uniqueEmail(role)): Promise<User> => {
    const user = { id: randomUUID(), email, name: role };
    await db.query('INSERT INTO users (id, email, name, password_hash, created_at) VALUES ($1, $2, $3, $4, now())', [user.id, email, user.name, await accounts.ctx.hasher.hash(PASSWORD)]);
    await db.query('INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, now())', [org, user.id, role]);
    return user;
  };
  const other = (await request(app).post('/admin/orgs').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({ name: 'Other' })).body.org.id as string;
  const users: People['users'] = {
    owner: setup.body.user,
    viewer: await addMember(orgId, 'viewer'),
    editor: await addMember(orgId, 'editor'),
    admin: await addMember(orgId, 'admin'),
    outsider: await addMember(other, 'owner'),
  };
  const callerOf = async (who: Role | 'outsider'): Promise<UserCaller> => accounts.sessions.authenticate((await accounts.sessions.create(users[who], 'tests')).token);
  return {
    db,
    keyStore,
    accounts,
    app,
    orgId,
    projectId: project.body.project.id,
    users,
    tokenOf: async (who) => (await accounts.sessions.create(users[who], 'tests')).token,
    callerOf,
    addMember,
    async orgWithRoles() {
      const org = (await request(app).post('/admin/orgs').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({ name: 'Roles' })).body.org.id as string;
      for (const role of ['viewer', 'editor', 'admin', 'owner'] as const) {
        await db.query('INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, now())', [org, users[role].id, role]);
      }
      return org;
    },
    clock,
  };
}
