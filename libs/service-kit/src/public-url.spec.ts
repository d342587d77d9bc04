import { parsePublicUrl, publicBaseUrl, validHost } from './public-url';

describe('public base URL', () => {
  it.each([
    ['analytics.example.com', 'analytics.example.com'],
    ['Analytics.Example.COM:8443', 'analytics.example.com:8443'],
    ['localhost:8080', 'localhost:8080'],
    ['127.0.0.1:33418', '127.0.0.1:33418'],
    ['[::1]:6274', '[::1]:6274'],
    ['mcp_gateway:8080', 'mcp_gateway:8080'],
    ['analytics.example.com.', 'analytics.example.com.'],
    ['analytics.example.com:443', 'analytics.example.com'],
  ])('takes the Host %j as %j', (host, normalised) => expect(validHost(host, 'https')).toBe(normalised));

  it.each([
    ['a quote', 'evil.example"'],
    ['a closing tag', 'a.example"><script>'],
    ['a space', 'a.example b'],
    ['a comma', 'a.example,evil.example'],
    ['a header injection', 'a.example\r\nSet-Cookie: x=1'],
    ['a path', 'a.example/evil'],
    ['user info', 'user@a.example'],
    ['a port over 65535', 'a.example:99999'],
    ['a port that is not a number', 'a.example:http'],
    ['an invalid IPv4 address', '999.1.1.1'],
    ['an invalid IPv6 address', '[::g]'],
    ['a label over 63 characters', `${'a'.repeat(64)}.example`],
    ['a value over 260 characters', `${'a.'.repeat(131)}example`],
    ['an empty value', ''],
  ])('refuses a Host with %s', (_name, host) => expect(validHost(host, 'http')).toBeUndefined());

  it('builds the base from PUBLIC_URL when set, else the protocol and a valid Host, else localhost', () => {
    expect(publicBaseUrl({ protocol: 'http', host: 'evil.example' }, 'https://analytics.example.com')).toBe('https://analytics.example.com');
    expect(publicBaseUrl({ protocol: 'https', host: 'analytics.example.com' })).toBe('https://analytics.example.com');
    expect(publicBaseUrl({ protocol: 'http', host: 'evil.example" x' })).toBe('http://localhost');
    expect(publicBaseUrl({ protocol: 'http', host: undefined })).toBe('http://localhost');
    expect(publicBaseUrl({ protocol: 'javascript', host: 'a.example' })).toBe('http://a.example');
  });

  it.each([
    ['https://analytics.example.com', 'https://analytics.example.com'],
    ['https://analytics.example.com/', 'https://analytics.example.com'],
    ['https://analytics.example.com:8443', 'https://analytics.example.com:8443'],
    ['http://localhost:8080', 'http://localhost:8080'],
  ])('reads PUBLIC_URL %s as the origin %s', (value, url) => expect(parsePublicUrl(value)).toEqual({ url }));

  it.each([
    ['analytics.example.com', /not an absolute URL/],
    ['http://analytics.example.com', /must be https/],
    ['ftp://analytics.example.com', /must be an https/],
    ['https://analytics.example.com/base', /must be an origin/],
    ['https://analytics.example.com/?a=1', /must be an origin/],
    ['https://analytics.example.com/#', /must be an origin/],
    ['https://u:p@analytics.example.com', /must be an origin/],
  ])('refuses PUBLIC_URL %s', (value, problem) => expect((parsePublicUrl(value) as { problem: string }).problem).toMatch(problem));
});
