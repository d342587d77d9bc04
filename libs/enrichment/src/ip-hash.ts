import { createHmac } from 'node:crypto';

/** `::ffff:1.2.3.4` (IPv4 seen through an IPv6 socket) and `1.2.3.4` are the same caller. */
export function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip.toLowerCase();
}

/**
 * Daily-rotating hash of the caller IP: HMAC-SHA256 keyed with `${secret}:${YYYY-MM-DD}` (UTC date), cut to 16 bytes,
 * returned as 32 hex chars (stored as FixedString(16) bytes). Same IP same day -> same hash; the raw IP is never kept.
 */
export function ipHash(ip: string, secret: string, atMs: number): string {
  const day = new Date(atMs).toISOString().slice(0, 10);
  return createHmac('sha256', `${secret}:${day}`).update(normalizeIp(ip)).digest('hex').slice(0, 32);
}
