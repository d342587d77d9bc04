import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import { type KeyEnv, type KeyKind, SHARE_TOKEN } from '@analytics/schema';

// The key kinds and environments are part of the API contract (admin bodies), so libs/schema holds them.
export { KEY_ENVS, KEY_KINDS, type KeyEnv, type KeyKind } from '@analytics/schema';

export interface ParsedKey {
  kind: KeyKind;
  env: KeyEnv;
  prefix: string;
  secret: string;
}

// `{kind}_{env}_{prefix}_{secret}`; prefix and secret are base62 so `_` only separates parts.
const KEY_PATTERN = /^(pk|sk|rk|ak)_(live|test)_([0-9A-Za-z]{1,64})_([0-9A-Za-z]{1,128})$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const PREFIX_LENGTH = 12; // ~71 bits: unique lookup handle, not a secret
export const SECRET_LENGTH = 32; // ~190 bits of randomness from crypto

export function parseApiKey(raw: string): ParsedKey | null {
  const m = KEY_PATTERN.exec(raw);
  if (!m) return null;
  return { kind: m[1] as KeyKind, env: m[2] as KeyEnv, prefix: m[3]!, secret: m[4]! };
}

/** A presented bearer credential: an API key, or a share link's (`shr_{prefix}_{secret}`, an rk_ row bound to a share). */
export interface PresentedKey extends ParsedKey {
  share: boolean;
}

/** An API key or a share credential; null for anything else. */
export function parsePresentedKey(raw: string): PresentedKey | null {
  const key = parseApiKey(raw);
  if (key) return { ...key, share: false };
  const m = SHARE_TOKEN.exec(raw);
  return m ? { kind: 'rk', env: 'live', prefix: m[1]!, secret: m[2]!, share: true } : null;
}

/** Uniform base62 from crypto.randomBytes (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with the stored hash. */
export function verifySecret(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function mintKey(kind: KeyKind, env: KeyEnv = 'live'): ParsedKey & { key: string; secretHash: string } {
  const prefix = randomBase62(PREFIX_LENGTH);
  const secret = randomBase62(SECRET_LENGTH);
  return { kind, env, prefix, secret, key: `${kind}_${env}_${prefix}_${secret}`, secretHash: hashSecret(secret) };
}

/** Accepts a bare prefix, `kind_env_prefix`, or a whole key, and returns the prefix part. */
export function extractPrefix(value: string): string | null {
  const parsed = parseApiKey(value);
  if (parsed) return parsed.prefix;
  const m = /^(?:(?:pk|sk|rk|ak)_(?:live|test)_)?([0-9A-Za-z]{1,64})$/.exec(value);
  return m ? m[1]! : null;
}
