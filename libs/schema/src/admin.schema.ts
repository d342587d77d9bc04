import { z } from 'zod';
import { timeZoneSchema } from './time-zone';

export const KEY_KINDS = ['pk', 'sk', 'rk', 'ak'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];
export const KEY_ENVS = ['live', 'test'] as const;
export type KeyEnv = (typeof KEY_ENVS)[number];

// PostgreSQL text cannot hold NUL: refuse it here (400) instead of letting the insert fail (500).
const noNul = (s: string) => !s.includes('\u0000');
const NUL_MESSAGE = { message: 'must not contain NUL characters' };

const name = z.string().trim().min(1).max(200).refine(noNul, NUL_MESSAGE).describe('Project name, 1 to 200 chars.');
/** The origin list as sent; the admin API normalises each entry with libs/auth's origin rules. */
export const allowedOriginsInputSchema = z
  .array(z.string().max(2048).refine(noNul, NUL_MESSAGE))
  .max(1000)
  .describe('Origins a pk_ key is accepted from: scheme://host[:port], "*" for any, or https://*.example.com for the subdomains of one site.');
const retentionDays = z.number().int().min(1).max(3650).describe('Days events are kept (default 365).');
const env = z.enum(KEY_ENVS).describe('Key environment segment (default live).');

const orgId = z.uuid({ message: 'must be a UUID' }).describe("The organization the project belongs to: required with a user token (admin of it); with ADMIN_TOKEN, unset means the oldest organization (none before setup).");

export const createProjectInputSchema = z
  .object({ name, allowed_origins: allowedOriginsInputSchema.optional(), retention_days: retentionDays.optional(), timezone: timeZoneSchema.optional(), env: env.optional(), org_id: orgId.optional() })
  .describe('A new project; it gets one pk_, sk_ and rk_ key.');

export const patchProjectInputSchema = z
  .object({ name: name.optional(), allowed_origins: allowedOriginsInputSchema.optional(), retention_days: retentionDays.optional(), timezone: timeZoneSchema.optional() })
  .describe('Fields to change; the rest stay.');

export const createKeyInputSchema = z.object({ kind: z.enum(KEY_KINDS).describe('Key kind.'), env: env.optional() }).describe('A new key of the project.');

export const projectSchema = z
  .object({
    id: z.string().describe('Project id (UUID).'),
    name: z.string(),
    allowed_origins: z.array(z.string()).describe('Normalised origin allowlist.'),
    retention_days: z.number().int(),
    created_at: z.string().describe('ISO 8601.'),
    org_id: z.string().nullable().describe('Its organization (null only before the first user is set up).'),
    timezone: z.string().describe('IANA time zone name its days, weeks and months are counted in (default UTC).'),
  })
  .describe('A project.');

/** GET /v1/project: the key's project as a read key may see it (no origins, no retention, no organization). */
export const readProjectResponseSchema = z
  .object({ project: z.object({ id: z.string().describe('Project id (UUID).'), name: z.string(), timezone: z.string().describe('IANA time zone name its days are counted in.') }) })
  .describe("The read key's project.");

export const createdProjectResponseSchema = z
  .object({
    project: projectSchema,
    keys: z.object({ pk: z.string(), sk: z.string(), rk: z.string() }).describe('The three keys, whole: shown once, never again.'),
  })
  .describe('The created project and its keys.');

export const projectListResponseSchema = z.object({ projects: z.array(projectSchema) }).describe("The projects of the caller's organizations (every project for ADMIN_TOKEN), oldest first.");
export const projectResponseSchema = z.object({ project: projectSchema }).describe('One project.');

export const mintedKeyResponseSchema = z
  .object({
    key: z.string().describe('The whole key: shown once, never again.'),
    prefix: z.string().describe('Public prefix, used to revoke it.'),
    kind: z.enum(KEY_KINDS),
    env: z.enum(KEY_ENVS),
    project_id: z.string(),
  })
  .describe('The created key.');

export type CreateProjectInput = z.output<typeof createProjectInputSchema>;
export type PatchProjectInput = z.output<typeof patchProjectInputSchema>;
export type Project = z.output<typeof projectSchema>;
export type CreatedProjectResponse = z.output<typeof createdProjectResponseSchema>;
export type MintedKeyResponse = z.output<typeof mintedKeyResponseSchema>;

/** POST /admin/backup: the embedded stores of `npm start` to a directory of the server's filesystem. */
export const backupInputSchema = z
  .object({ dir: z.string().min(1).max(4096).describe('Absolute path on the server; created, or an existing empty directory.') })
  .strict()
  .describe('Where to write the backup.');

const appliedMigrationSchema = z.object({ version: z.number().int(), name: z.string(), checksum: z.string().nullable() });

export const backupManifestSchema = z
  .object({
    format: z.literal(1),
    created_at: z.string().describe('When the event store was backed up (ISO 8601); the key store follows within seconds.'),
    package_version: z.string(),
    node_version: z.string(),
    clickhouse_database: z.string(),
    event_store: z.object({ engine: z.literal('chdb'), path: z.string(), migrations: z.array(appliedMigrationSchema) }),
    key_store: z.object({ engine: z.literal('pglite'), file: z.string(), migrations: z.array(appliedMigrationSchema) }),
    secrets: z.string().nullable().describe('secrets.json of the data directory (ADMIN_TOKEN, IP_HASH_SECRET, INTERNAL_SECRET), if it had one.'),
  })
  .describe('manifest.json of a backup.');

export const backupResponseSchema = z.object({ ok: z.literal(true), dir: z.string(), manifest: backupManifestSchema }).describe('The backup written.');
export type BackupManifest = z.output<typeof backupManifestSchema>;
