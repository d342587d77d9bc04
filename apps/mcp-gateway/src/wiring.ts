import { type Accounts, AuditLog } from '@analytics/accounts';
import { OAuthStore } from '@analytics/auth';
import type { IngestRouterDeps } from '@analytics/ingest-api';
import type { Stores } from '@analytics/runtime';
import type { Logger } from '@analytics/service-kit';
import type { McpRouterDeps } from './mcp.routes';

export interface McpSettings {
  logger: Logger;
  /** MCP_ALLOWED_ORIGINS. */
  allowedOrigins?: readonly string[];
  /** OAuth for connector UIs on /mcp (MCP_OAUTH). */
  oauth: boolean;
  /** PUBLIC_URL. */
  publicUrl?: string;
  /** People accounts: the consent page's sign-in and project picker, and their audit writer. */
  accounts?: Accounts;
}

/** The MCP routes over opened stores; track_event runs on the ingest wiring given (its IngestService and rate limits). */
export function mcpWiring(stores: Stores, ingest: IngestRouterDeps, settings: McpSettings): McpRouterDeps {
  return {
    ...ingest,
    saved: stores.keyStore.lookup,
    logger: settings.logger,
    allowedOrigins: settings.allowedOrigins,
    oauth: settings.oauth ? { store: new OAuthStore(stores.keyDb), limiter: stores.limiter } : undefined,
    publicUrl: settings.publicUrl,
    consent: settings.accounts?.mcpConsent,
    // Tool calls through a grant bound to a person are audited whether or not this instance signs people in.
    audit: settings.oauth ? (settings.accounts?.audit ?? new AuditLog(stores.keyDb, Date.now, (e, action) => settings.logger.warn({ err: (e as Error).message }, `audit ${action} failed`))) : undefined,
  };
}
