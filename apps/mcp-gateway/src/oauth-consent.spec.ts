import { authorizePage, redirectTargetOf } from './oauth-consent';

describe('the consent page', () => {
  it.each([
    ['https://claude.ai/api/mcp/auth_callback', 'claude.ai'],
    ['https://app.example:8443/cb', 'app.example:8443'],
    ['http://127.0.0.1:33418/callback', '127.0.0.1:33418'],
    ['https://bücher.example/cb', 'xn--bcher-kva.example'],
    ['com.example.app:/oauth2redirect', 'the app that opens com.example.app: links on this device'],
  ])('names where the code of %s goes as %s', (uri, target) => expect(redirectTargetOf(uri)).toBe(target));

  it('marks the client unverified next to its escaped name and shows the redirect host', () => {
    const html = authorizePage(
      { client_id: 'c-1', client_name: '"><script>x</script>', redirect_uris: ['https://evil.example/cb'] },
      { redirectUri: 'https://evil.example/cb', codeChallenge: 'ch', state: 's' },
    );
    expect(html).toContain('<h1>Connect &#34;&#62;&#60;script&#62;x&#60;/script&#62; <span class="unverified">unverified</span></h1>');
    expect(html).toContain('<strong class="target">evil.example</strong>');
    expect(html).not.toContain('<script>');
  });
});
