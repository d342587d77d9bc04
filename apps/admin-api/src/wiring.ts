import type { Accounts } from '@analytics/accounts';
import type { InvalidationBus, KeyStore } from '@analytics/auth';
import type { AdminRouterDeps } from './admin.routes';

/** The admin routes over the key store; new keys, revocations and project changes go out on the bus (other instances via Redis). */
export function adminWiring(
  stores: { keyStore: KeyStore; bus: InvalidationBus; accounts: Accounts },
  adminToken: string,
  options: { publicUrl?: string; deleteProjectEvents?: (projectId: string) => Promise<void> } = {},
): AdminRouterDeps {
  return {
    keyStore: stores.keyStore,
    accounts: stores.accounts,
    adminToken,
    publicUrl: options.publicUrl,
    deleteProjectEvents: options.deleteProjectEvents,
    onKeyRevoked: (prefix) => stores.bus.keyRevoked(prefix),
    onProjectChanged: (id) => stores.bus.projectChanged(id),
    onKeyMinted: (prefix) => stores.bus.keyMinted(prefix),
  };
}
