import { createHash, randomBytes } from 'node:crypto';

/** The OAuth client's redirect URI in the consent specs (nothing listens there: the specs read the redirect). */
export const REDIRECT_URI = 'http://127.0.0.1:33419/callback';

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The query of an authorization request for `clientId` with PKCE `challenge` and `state`. */
export const authParams = (clientId: string, challenge: string, state: string) => ({
  client_id: clientId, redirect_uri: REDIRECT_URI, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state,
});

/** The value of a hidden field of a page. */
export const fieldOf = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
