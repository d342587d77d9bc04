import { redirectUriProblem } from './redirect-uri';

describe('redirect URIs a client may register', () => {
  it.each([
    'https://claude.ai/api/mcp/auth_callback',
    'https://app.example.com:8443/cb?tenant=1',
    'http://127.0.0.1:33418/callback',
    'http://127.0.0.1/cb',
    'http://[::1]:6274/oauth/callback',
    'http://localhost:6274/oauth/callback',
    'com.example.app:/oauth2redirect',
    'cursor://anysphere.cursor-mcp/oauth/callback',
  ])('accepts %s', (uri) => expect(redirectUriProblem(uri)).toBeUndefined());

  it.each([
    ['http://app.example.com/cb', /plain http/],
    ['http://localhost.evil.example/cb', /plain http/],
    ['http://127.0.0.1.nip.io/cb', /plain http/],
    ['https://app.example.com/cb#frag', /fragment/],
    ['http://127.0.0.1:1/cb#', /fragment/],
    ['com.example.app:/cb#x', /fragment/],
    ['file:///etc/passwd', /file: scheme/],
    ['blob:https://app.example.com/0b5e', /blob: scheme/],
    ['data:text/html,<script>alert(1)</script>', /data: scheme/],
    ['javascript:alert(1)', /javascript: scheme/],
    ['JavaScript:alert(1)', /javascript: scheme/],
    ['java\nscript:alert(1)', /control/],
    [' https://app.example.com/cb', /control/],
    ['vbscript:msgbox(1)', /vbscript: scheme/],
    ['https://user:pw@app.example.com/cb', /user:password/],
    ['/relative/cb', /absolute/],
    ['not a uri', /control/],
    [`https://app.example.com/${'a'.repeat(2048)}`, /longer than 2048/],
  ])('refuses %j', (uri, problem) => expect(redirectUriProblem(uri)).toMatch(problem));
});
