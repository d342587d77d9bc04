import { normalizeOrigin, originAllowed, parseOriginEntry } from './origin';

describe('origins', () => {
  it.each([
    ['https://Shop.Example.com/', 'https://shop.example.com'],
    ['https://shop.example.com:443', 'https://shop.example.com'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['ftp://x.example', null],
    ['https://shop.example.com/path', null],
    ['nonsense', null],
    ['*', null],
    ['https://*', null],
    ['https://*.example.com', null],
  ])('normalises the request origin %s to %s', (input, out) => expect(normalizeOrigin(input)).toBe(out));

  it('matches exact origins, wildcards and nothing else', () => {
    const allowed = ['https://shop.example.com', 'https://*.brand.example'];
    expect(originAllowed('https://shop.example.com', allowed)).toBe(true);
    expect(originAllowed('https://SHOP.example.com:443', allowed)).toBe(true);
    expect(originAllowed('http://shop.example.com', allowed)).toBe(false);
    expect(originAllowed('https://eu.brand.example', allowed)).toBe(true);
    expect(originAllowed('https://brand.example', allowed)).toBe(false);
    expect(originAllowed('https://evilshop.example.com', allowed)).toBe(false);
    expect(originAllowed(undefined, allowed)).toBe(false);
    expect(originAllowed('null', allowed)).toBe(false);
    expect(originAllowed('https://any.example', ['*'])).toBe(true);
  });

  it('does not take a wildcard sent as the Origin header for the allowlist entry it spells', () => {
    expect(originAllowed('https://*.brand.example', ['https://*.brand.example'])).toBe(false);
  });
});

describe('allowed_origins entries', () => {
  it.each([
    ['*', '*'],
    ['https://Shop.Example.com/', 'https://shop.example.com'],
    ['https://*.example.com', 'https://*.example.com'],
    ['HTTPS://*.Example.COM:443/', 'https://*.example.com'],
    ['https://*.shop.example.co.uk', 'https://*.shop.example.co.uk'],
    ['https://*.example.co.uk', 'https://*.example.co.uk'],
    ['https://*.alice.github.io', 'https://*.alice.github.io'],
    ['http://*.localhost:3000', 'http://*.localhost:3000'],
    ['https://*.brand.example', 'https://*.brand.example'],
  ])('accepts %s as %s', (input, out) => expect(parseOriginEntry(input)).toEqual({ origin: out }));

  it.each([
    ['https://*.com', 'com'],
    ['https://*.COM.', 'com'],
    ['https://*.co.uk', 'co.uk'],
    ['http://*.co.uk:8080', 'co.uk'],
    ['https://*.github.io', 'github.io'],
    ['https://*.s3.amazonaws.com', 's3.amazonaws.com'],
    ['https://*.anything.ck', 'anything.ck'],
    ['https://*.公司.cn', 'xn--55qx5d.cn'],
    ['https://*.internal', 'internal'],
  ])('refuses %s: a wildcard over the public suffix %s', (input, suffix) =>
    expect(parseOriginEntry(input)).toEqual({ problem: expect.stringContaining(`wildcard over a public suffix (${suffix}) would allow every site under it`) }),
  );

  it.each(['https://*', 'https://*:8443', 'http://*/'])('refuses the bare wildcard host %s, which matches no origin', (input) =>
    expect(parseOriginEntry(input)).toEqual({ problem: expect.stringContaining('a bare wildcard host matches no origin') }),
  );

  it.each([
    ['https://*.0.1', '0.0.0.1'],
    ['https://*.168.1.1', '168.1.0.1'],
    ['https://*.10.0.0.1', '10.0.0.1'],
    ['https://*.[::1]', '[::1]'],
  ])('refuses %s: a wildcard over an IP address (%s)', (input, ip) =>
    expect(parseOriginEntry(input)).toEqual({ problem: expect.stringContaining(`a wildcard over an IP address (${ip})`) }),
  );

  it.each([
    ['https://a.*.example.com', 'a wildcard must be the whole leftmost label'],
    ['https://*example.com', 'a wildcard must be the whole leftmost label'],
    ['https://*.*.example.com', 'not an origin after the wildcard'],
    ['https://*.example.com/path', 'not an origin after the wildcard'],
    ['https://*..com', 'not a domain name after the wildcard'],
    ['ftp://*.example.com', 'a wildcard must be the whole leftmost label'],
    ['not an origin', 'not an origin (scheme://host[:port]'],
  ])('refuses %s with the reason "%s"', (input, reason) => expect(parseOriginEntry(input)).toEqual({ problem: expect.stringContaining(reason) }));
});
