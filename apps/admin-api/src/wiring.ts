import type { Accounts } from '@analytics/accounts';
import type { InvalidationBus, KeyStore, RevocationEpoch } from '@analytics/auth';
import { ApiError } from '@analytics/schema';
import type { AdminRouterDeps } from './admin.routes';

/**
 * Makes a committed revocation or project change hold on every instance before the route answers: the revocation
 * epoch is replaced (libs/auth revocation-epoch.ts), so each instance looks the key up again on its next request. An
 * acknowledgement from every instance was the other way; it cannot tell a dead instance from a slow one, nor count one
 * whose subscription was reconnecting, nor cover a lookup in flight, while the epoch needs no message to arrive at all.
 */
async function advanceEpoch(epoch: RevocationEpoch, what: string): Promise<void> {
  try {
    await epoch.advance();
  } catch (e) {
    const details = `${what} is saved in the key store, but Redis did not take the revocation epoch: instances that cached the key may accept it for up to KEY_CACHE_TTL_MS`;
    throw new ApiError('upstream_failed', { details }, { cause: e });
  }
}

/**
 * The admin routes over the key store. Revocations and project changes replace the revocation epoch (every instance
 * refuses at once) and go out on the bus, which drops cache entries early without being waited for; new keys go out
 * on the bus, waited for, so that every instance knows the prefix before the 201.
 */
export function adminWiring(
  stores: { keyStore: KeyStore; bus: InvalidationBus; epoch: RevocationEpoch; accounts: Accounts },
  adminToken: string,
  options: Pick<AdminRouterDeps, 'publicUrl' | 'deleteProjectEvents' | 'importEvents' | 'alertChannels' | 'reportPreview'> = {},
): AdminRouterDeps {
  return {
    keyStore: stores.keyStore,
    accounts: stores.accounts,
    adminToken,
    publicUrl: options.publicUrl,
    deleteProjectEvents: options.deleteProjectEvents,
    importEvents: options.importEvents,
    alertChannels: options.alertChannels,
    reportPreview: options.reportPreview,
    onKeyRevoked: async (prefix) => {
      await advanceEpoch(stores.epoch, 'The revocation');
      void stores.bus.keyRevoked(prefix);
    },
    onProjectChanged: async (id) => {
      await advanceEpoch(stores.epoch, 'The change');
      void stores.bus.projectChanged(id);
    },
    onKeyMinted: (prefix) => stores.bus.keyMinted(prefix),
  };
}
