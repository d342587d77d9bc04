import type { Express } from 'express';
import { adminRouters, adminWiring } from '@analytics/admin-api';
import type { Accounts } from '@analytics/accounts';
import type { ChannelOptions } from '@analytics/alerts';
import { createIngestRouter, ingestWiring } from '@analytics/ingest-api';
import { createMcpRouter, mcpWiring } from '@analytics/mcp-gateway';
import { createReadRouter, readWiring } from '@analytics/read-api';
import { createRetentionRouter, retentionWiring } from '@analytics/retention-worker';
import { failedAuthKeyOf } from '@analytics/auth';
import { type RateRules, importEvents } from '@analytics/ingest';
import { type ReportPreview, type Stores, openAccounts } from '@analytics/runtime';
import { type ServiceAppBase, apiDocsRouter, createServiceApp, sdkRouter } from '@analytics/service-kit';
import { createBackupRouter } from './backup.route';
import { createDashboardRouter } from './dashboard.route';
import type { Secrets } from './secrets';

export interface StandaloneDeps extends ServiceAppBase {
  stores: Stores;
  secrets: Secrets;
  rateRules?: RateRules;
  /** SESSION_IDLE_MINUTES in ms; unset, 30 minutes. */
  sessionIdleMs?: number;
  clock?: () => number;
  /** The dashboard's static build (dist/apps/dashboard), served at GET / without a key. */
  dashboardDir?: string;
  /** The browser SDK's build (dist/libs/sdk-browser), served at GET /sdk/analytics.min.js without a key. */
  sdkDir?: string;
  /** MCP_ALLOWED_ORIGINS, MCP_OAUTH (OAuth for connector UIs on /mcp) and PUBLIC_URL. */
  mcp?: { allowedOrigins?: readonly string[]; oauth?: boolean; publicUrl?: string };
  /** DATA_DIR: POST /admin/backup copies its secrets.json into the backup. */
  dataDir?: string;
  /** Users, sessions and roles (main opens them with the settings); unset: the defaults over `stores`. */
  accounts?: Accounts;
  /** BACKUP_DIR: POST /admin/backup writes only into folders under it. */
  backupDir?: string;
  /** LIVE_MAX_PER_PROJECT: GET /v1/live's open streams per project. */
  liveMaxPerProject?: number;
  /** The alerts' mail (SMTP_URL) and ALERTS_ALLOW_PRIVATE_URLS; unset: no mail, private addresses refused. */
  alertChannels?: ChannelOptions;
  /** POST .../reports/{report_id}/send: the reports' preview mailer (main: reportMailingOf over SMTP_URL, MAIL_FROM, PUBLIC_URL). */
  reportPreview?: ReportPreview;
}

/** Every app's routes on one express instance, over one set of stores (`npm start`), wired as each app wires them. */
export function buildApp(deps: StandaloneDeps): Express {
  const { stores, secrets, clock } = deps;
  const ingest = ingestWiring(stores, { ipHashSecret: secrets.IP_HASH_SECRET, rateRules: deps.rateRules, clock, sessionIdleMs: deps.sessionIdleMs, logger: deps.logger });
  const accounts = deps.accounts ?? openAccounts(stores, { PUBLIC_URL: deps.mcp?.publicUrl }, deps.logger, secrets.ADMIN_TOKEN);
  // The event store is here: a deleted project's events are submitted for deletion at once (as a forget).
  const admin = adminWiring({ ...stores, accounts }, secrets.ADMIN_TOKEN, {
    publicUrl: deps.mcp?.publicUrl,
    deleteProjectEvents: (id) => stores.events.forgets.forgetProject(id),
    importEvents: (id, events) => importEvents(stores.events, id, events),
    alertChannels: deps.alertChannels,
    reportPreview: deps.reportPreview ?? { missing: 'SMTP_URL, MAIL_FROM and PUBLIC_URL' },
  });
  return createServiceApp({
    name: 'standalone',
    logger: deps.logger,
    trustProxy: deps.trustProxy,
    limits: deps.limits,
    metricsToken: deps.metricsToken,
    eventStore: stores.events,
    budgetKeyOf: failedAuthKeyOf(stores.authenticator),
    ready: { event_store: () => stores.events.ping(), key_store: () => stores.keyStore.ping() },
    routers: [
      ...(deps.dashboardDir ? [createDashboardRouter(deps.dashboardDir, { embedOrigins: (token) => accounts.shares.embedOrigins(token) })] : []),
      createIngestRouter(ingest),
      createReadRouter({ ...readWiring(stores), logger: deps.logger, ...(deps.liveMaxPerProject ? { live: { maxPerProject: deps.liveMaxPerProject } } : {}) }),
      createMcpRouter(mcpWiring(stores, ingest, { logger: deps.logger, allowedOrigins: deps.mcp?.allowedOrigins, oauth: deps.mcp?.oauth ?? false, publicUrl: deps.mcp?.publicUrl, accounts })),
      // Before the admin router, which answers every other /admin path itself.
      createBackupRouter(stores, secrets.ADMIN_TOKEN, { dataDir: deps.dataDir, backupDir: deps.backupDir, audit: accounts.audit }),
      ...adminRouters(admin),
      createRetentionRouter(retentionWiring(stores, { internalSecret: secrets.INTERNAL_SECRET, clock })),
      apiDocsRouter('all'),
      ...(deps.sdkDir ? [sdkRouter(deps.sdkDir)] : []),
    ],
  });
}
