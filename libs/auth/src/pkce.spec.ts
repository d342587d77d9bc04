import { pkceVerifierMatches } from './pkce';

// RFC 7636 appendix B.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  it.each([
    ['the RFC 7636 example', VERIFIER, CHALLENGE, true],
    ['another verifier', VERIFIER.replace(/.$/, 'l'), CHALLENGE, false],
    ['no verifier', undefined, CHALLENGE, false],
    ['the challenge itself as verifier (plain method)', CHALLENGE, CHALLENGE, false],
    ['a verifier shorter than 43 characters', VERIFIER.slice(0, 42), CHALLENGE, false],
    ['a verifier with characters outside the unreserved set', `${VERIFIER}+/`, CHALLENGE, false],
    ['a verifier longer than 128 characters', 'a'.repeat(129), CHALLENGE, false],
  ])('%s: %s', (_name, verifier, challenge, matches) => expect(pkceVerifierMatches(verifier, challenge)).toBe(matches));
});
