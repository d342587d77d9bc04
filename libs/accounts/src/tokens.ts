import { hashSecret, randomBase62 } from '@analytics/auth';

/**
 * A user token: `ses_{id}_{secret}`. Never an API key (`{pk|sk|rk|ak}_{env}_…`) nor an MCP OAuth token (`mcp_…`), so
 * one Authorization header tells which it is. The id is the session's public handle (GET /auth/sessions); the secret
 * is stored only as its SHA-256 and compared in constant time (libs/auth's verifySecret), as key secrets are.
 */
export const SESSION_TOKEN_PREFIX = 'ses_';
const SESSION_TOKEN = /^ses_([0-9A-Za-z]{22})_([0-9A-Za-z]{43})$/;
const SESSION_ID_LENGTH = 22; // ~131 bits: a unique handle, not a secret
const SECRET_LENGTH = 43; // ~256 bits

export interface MintedSessionToken {
  id: string;
  token: string;
  secretHash: string;
}

export function mintSessionToken(): MintedSessionToken {
  const id = randomBase62(SESSION_ID_LENGTH);
  const secret = randomBase62(SECRET_LENGTH);
  return { id, token: `${SESSION_TOKEN_PREFIX}${id}_${secret}`, secretHash: hashSecret(secret) };
}

/** The id and secret of a user token, or null for anything else. */
export function parseSessionToken(token: string): { id: string; secret: string } | null {
  const m = SESSION_TOKEN.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : null;
}

/**
 * A one-time token of a link (`inv_…` invitation, `rst_…` password reset): 256 random bits, stored only as its SHA-256
 * and looked up by it (no prefix to compare: the hash of an unguessable value is the lookup key itself).
 */
export function mintLinkToken(kind: 'inv' | 'rst'): { token: string; hash: string } {
  const token = `${kind}_${randomBase62(SECRET_LENGTH)}`;
  return { token, hash: hashSecret(token) };
}

export const linkTokenHash = (token: string): string => hashSecret(token);
