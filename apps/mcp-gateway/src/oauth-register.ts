import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { RequestHandler } from 'express';
import { OAuthClientMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type OAuthStore, REGISTRATION_LIMITS } from '@analytics/auth';
import { ApiError } from '@analytics/schema';
import type { RateLimiter } from '@analytics/service-kit';

/** The SDK's own lifetime of a registered client's secret. */
const CLIENT_SECRET_TTL_S = 30 * 86_400;

/** An IPv4 address, or the /64 an IPv6 address is in (one host holds a whole /64, and picks any address in it). */
export function addressBlock(ip: string): string {
  const address = (ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip).split('%')[0]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/** The bucket a registering client's address draws from: a keyed hash of its block (Redis never holds the address). */
export const registrationSource = (ip: string, secret: string) => createHmac('sha256', secret).update(`oauth-register\0${addressBlock(ip)}`).digest('hex').slice(0, 32);

export interface RegistrationOptions {
  /** Buckets shared by every instance through Redis when REDIS_URL is set, this process's otherwise. */
  limiter: RateLimiter;
  /** Keys the hash of the client's address (IP_HASH_SECRET). */
  addressSecret: string;
  perAddress?: number;
  windowS?: number;
}

/**
 * POST /register (RFC 7591), in place of the SDK's handler: the SDK answers any error of its clients store with 400 or
 * 500, and a registration refused for its address (429 rate_limited, Retry-After: a bucket of `perAddress` per
 * `windowS`) or because the store holds its maximum of clients (503, Retry-After) must say so. Otherwise as the SDK
 * registers: the metadata through its schema, a random client_id, and a secret (30 days) unless the client
 * authenticates with none; the 201 shows the secret once.
 */
export function registerHandler(store: OAuthStore, options: RegistrationOptions): RequestHandler {
  const perAddress = options.perAddress ?? REGISTRATION_LIMITS.perAddress;
  const windowS = options.windowS ?? REGISTRATION_LIMITS.windowS;
  return async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const parsed = OAuthClientMetadataSchema.safeParse(req.body);
    if (!parsed.success) return void res.status(400).json({ error: 'invalid_client_metadata', error_description: parsed.error.message });
    const bucket = `oauth-register:${registrationSource(req.ip ?? '', options.addressSecret)}`;
    const { allowed, retryAfterS } = await options.limiter.take(bucket, { ratePerS: perAddress / windowS, burst: perAddress });
    if (!allowed) throw new ApiError('rate_limited', { retry_after_s: retryAfterS, details: `at most ${perAddress} client registrations per ${windowS / 60} minutes from one address` });
    const issuedAt = Math.floor(Date.now() / 1000);
    const confidential = parsed.data.token_endpoint_auth_method !== 'none';
    const client = {
      ...parsed.data,
      client_id: randomUUID(),
      client_id_issued_at: issuedAt,
      ...(confidential ? { client_secret: randomBytes(32).toString('hex'), client_secret_expires_at: issuedAt + CLIENT_SECRET_TTL_S } : {}),
    };
    const outcome = await store.registerClient(client.client_id, client);
    if (!('refused' in outcome)) return void res.status(201).json(client);
    res.status(503).set('Retry-After', String(outcome.retryAfterS)).json({
      error: 'temporarily_unavailable',
      error_description: `this server holds its maximum of ${store.maxClients} registered clients; a registration never used is deleted a day after it was made: try again later`,
    });
  };
}
