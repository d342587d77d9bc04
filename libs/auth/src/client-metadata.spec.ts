import { CLIENT_METADATA_LIMITS, clientMetadataProblem } from './client-metadata';

const ok = { client_name: 'Claude', redirect_uris: ['https://claude.ai/api/mcp/auth_callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] };

describe('client metadata a registration may carry', () => {
  it('accepts an ordinary registration, one at every cap, and leaves wrong types to the registration schema', () => {
    expect(clientMetadataProblem(ok)).toBeUndefined();
    const atCaps = {
      client_name: 'n'.repeat(CLIENT_METADATA_LIMITS.clientName),
      redirect_uris: Array.from({ length: CLIENT_METADATA_LIMITS.redirectUris }, (_, i) => `http://127.0.0.1:${3000 + i}/cb`),
      client_uri: `https://app.example/${'p'.repeat(2048 - 'https://app.example/'.length)}`,
    };
    expect(clientMetadataProblem(atCaps)).toBeUndefined();
    expect(clientMetadataProblem({ client_name: 5, redirect_uris: 'https://a.example/cb' })).toBeUndefined();
  });

  it.each([
    ['a body that is not an object', ['https://a.example/cb'], /must be a JSON object/],
    ['a client_name of 201 characters', { ...ok, client_name: 'n'.repeat(201) }, /client_name is 201 characters; at most 200/],
    ['a client_name with a right-to-left override', { ...ok, client_name: 'Claude\u202Eexe.' }, /text-direction/],
    ['a client_name with a newline', { ...ok, client_name: 'Claude\nverified' }, /control/],
    ['11 redirect URIs', { ...ok, redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }, /redirect_uris has 11 entries; at most 10/],
    ['a redirect URI of 2049 characters', { ...ok, redirect_uris: [`https://a.example/${'p'.repeat(2049 - 18)}`] }, /redirect_uris holds a string longer than 2048/],
    ['a logo_uri of 2049 characters', { ...ok, logo_uri: `https://a.example/${'p'.repeat(2049 - 18)}` }, /logo_uri holds a string longer than 2048/],
    ['11 contacts', { ...ok, contacts: Array.from({ length: 11 }, (_, i) => `c${i}@a.example`) }, /contacts has 11 entries; at most 10/],
    ['metadata over 8 KB of JSON', { ...ok, jwks: { keys: Array.from({ length: 10 }, () => ({ n: 'x'.repeat(900) })) } }, /at most 8192/],
  ])('refuses %s with invalid_client_metadata', (_name, metadata, description) => {
    const refusal = clientMetadataProblem(metadata);
    expect(refusal?.error).toBe('invalid_client_metadata');
    expect(refusal?.description).toMatch(description);
  });

  it.each([
    ['no redirect URI', [], /at least one/],
    ['plain http to a public host', ['https://a.example/cb', 'http://a.example/cb'], /^redirect_uris\[1\] uses plain http/],
    ['a fragment', ['https://a.example/cb#x'], /^redirect_uris\[0\] must not contain a fragment/],
    ['javascript:', ['javascript:alert(1)'], /javascript: scheme/],
  ])('refuses %s with invalid_redirect_uri', (_name, redirect_uris, description) => {
    const refusal = clientMetadataProblem({ ...ok, redirect_uris });
    expect(refusal?.error).toBe('invalid_redirect_uri');
    expect(refusal?.description).toMatch(description);
  });
});
