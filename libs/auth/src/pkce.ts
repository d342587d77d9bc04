import { createHash, timingSafeEqual } from 'node:crypto';

// RFC 7636 4.1: 43 to 128 unreserved characters.
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Whether a PKCE code_verifier matches its S256 code_challenge (RFC 7636 4.6), compared in constant time. */
export function pkceVerifierMatches(verifier: string | undefined, challenge: string): boolean {
  if (verifier === undefined || !VERIFIER.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
