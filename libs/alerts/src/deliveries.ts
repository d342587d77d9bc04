import type { AlertDeliveryRecord, AlertStore } from '@analytics/auth';
import { type ChannelMessage, type ChannelOptions, attempt } from './channels';

/** Retries of a failed delivery go on for this long after it was made (5xx, timeouts, connection and DNS failures). */
export const RETRY_FOR_MS = 3_600_000;
/** The wait before attempt n + 1: 30 s doubled each time, at most 15 minutes (about 8 attempts in the hour). */
export const retryDelayMs = (attempts: number) => Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 15 * 60_000);
/** A delivery taken by a round is not taken again before this (a worker killed mid-send leaves it due after it). */
export const DELIVERY_LEASE_MS = 60_000;
/** Deliveries attempted at once, and taken per round at most. */
const BATCH = 20;
const MAX_PER_ROUND = 500;

interface Log {
  warn(obj: object, msg: string): void;
}

/**
 * Works through the pending deliveries (alert_deliveries): each due one is taken under a lease, attempted once, and
 * settled: sent, failed for good (a refusal: 4xx, the address guard, no SMTP_URL), or due again after retryDelayMs
 * until RETRY_FOR_MS after it was made, then failed.
 */
export class AlertSender {
  constructor(
    private readonly store: AlertStore,
    private readonly channels: ChannelOptions,
    private readonly logger?: Log,
  ) {}

  /** Attempts the deliveries due at `now` (or only `ids`, due now); answers how many were attempted. */
  async deliverDue(now: Date, ids?: string[]): Promise<number> {
    let attempted = 0;
    while (attempted < MAX_PER_ROUND) {
      const batch = await this.store.claimDue(now, new Date(now.getTime() + DELIVERY_LEASE_MS), BATCH, ids);
      if (batch.length === 0) break;
      await Promise.all(batch.map((d) => this.deliverOne(d, now)));
      attempted += batch.length;
    }
    return attempted;
  }

  private async deliverOne(d: AlertDeliveryRecord, now: Date): Promise<void> {
    const result = await attempt(d.message as ChannelMessage, this.channels).catch((e: unknown) => ({ ok: false as const, retry: true, error: (e as Error).message }));
    const attempts = d.attempts + 1;
    if (result.ok) return this.store.settle(d.id, { status: 'sent', attempts, at: now });
    const retryAt = new Date(now.getTime() + retryDelayMs(attempts));
    const giveUp = !result.retry || retryAt.getTime() > new Date(d.give_up_at).getTime();
    if (giveUp) this.logger?.warn({ alert_id: d.alert_id, channel: d.channel, kind: d.kind, attempts, err: result.error }, 'alert delivery failed');
    await this.store.settle(d.id, giveUp ? { status: 'failed', attempts, at: now, error: result.error } : { status: 'pending', attempts, at: now, retryAt, error: result.error });
  }
}
