import fc from 'fast-check';
import { hostOf, normalizeRequestHost, parsePathOnly, parseUrlLoose, plainWebHost, readQuery, slugifyHost } from './parse';

describe('parseUrlLoose', () => {
  it.each([
    ['https://example.com/x', 'https://example.com/x'],
    ['HTTP://Example.com:80/x', 'http://example.com/x'],
    ['example.com/x?y=1', 'https://example.com/x?y=1'],
    ['example.com', 'https://example.com/'],
    ['example.com:8080/x', 'https://example.com:8080/x'],
    ['//example.com/x', 'https://example.com/x'],
    ['  https://example.com  ', 'https://example.com/'],
    ['android-app://com.google.android.gm/', 'android-app://com.google.android.gm/'],
    ['com.example.app://home?x=1', 'com.example.app://home?x=1'],
    ['about:blank', 'about:blank'],
  ])('%s -> %s', (raw, href) => {
    expect(parseUrlLoose(raw)?.href).toBe(href);
  });

  it.each(['', '   ', 'not a url', 'http://', 'https://exa mple.com', '%%%', '::::', 'https://example.com:99999/'])('rejects %j', (raw) => {
    expect(parseUrlLoose(raw)).toBeUndefined();
  });
});

describe('parsePathOnly', () => {
  it('parses "/path?query"', () => {
    expect(parsePathOnly('/a?b=1')?.search).toBe('?b=1');
  });
  it.each(['//host/a', '/\\host', 'a/b', '', 'https://x.com/'])('ignores %j', (raw) => {
    expect(parsePathOnly(raw)).toBeUndefined();
  });
});

describe('normalizeRequestHost', () => {
  it.each([
    ['example.com', 'example.com'],
    ['Example.COM:8080', 'example.com'],
    ['www.example.com.', 'www.example.com'],
    ['[::1]:3000', '[::1]'],
    ['https://example.com/x', 'example.com'],
    ['', ''],
    ['exa mple', ''],
  ])('%j -> %j', (raw, host) => {
    expect(normalizeRequestHost(raw)).toBe(host);
  });
});

describe('slugifyHost', () => {
  it.each([
    ['news.ycombinator.com', 'news-ycombinator-com'],
    ['www.example.com', 'example-com'],
    ['WWW.Example.com', 'example-com'],
    ['www.www.example.com', 'www-example-com'],
    ['my--site..example.com', 'my-site-example-com'],
    ['-x-.example.com-', 'x-example-com'],
    ['[2001:db8::1]', '2001-db8-1'],
    ['---', ''],
    ['', ''],
  ])('%j -> %j', (host, slug) => {
    expect(slugifyHost(host)).toBe(slug);
  });
});

describe('readQuery', () => {
  it('reads click ids and utm parameters case-insensitively', () => {
    const q = readQuery('?GCLID=1&FbClId=2&UTM_SOURCE=Google&Utm_Medium=CPC&utm_campaign=Mixed%20Case');
    expect(q).toMatchObject({ gclid: true, fbclid: true, utmSource: 'google', utmMedium: 'cpc', utmCampaign: 'Mixed Case', anyUtm: true });
  });
  it('treats empty and whitespace values as absent', () => {
    const q = readQuery('?gclid=&msclkid=%20&utm_source=+&utm_medium');
    expect(q).toMatchObject({ gclid: false, msclkid: false, utmSource: undefined, utmMedium: undefined, anyUtm: false });
  });
  it('flags any other utm_* parameter', () => {
    expect(readQuery('?utm_content=x').anyUtm).toBe(true);
    expect(readQuery('?utm_x=1').anyUtm).toBe(true);
    expect(readQuery('?utm_=x').anyUtm).toBe(false);
    expect(readQuery('?utm=x').anyUtm).toBe(false);
  });
  it('keeps the first non-empty occurrence', () => {
    expect(readQuery('?utm_campaign=&utm_campaign=A&utm_campaign=B').utmCampaign).toBe('A');
  });
  it('survives malformed escapes (decoded like URLSearchParams does)', () => {
    expect(readQuery('?utm_source=%E0%A4%A&utm_campaign=%ZZ').utmSource).toBe('\ufffd%a');
    expect(readQuery('?utm_campaign=%ZZ').utmCampaign).toBe('%ZZ');
  });
  it('reads an empty or absent query', () => {
    expect(readQuery('')).toMatchObject({ anyUtm: false, gclid: false });
    expect(readQuery('?')).toMatchObject({ anyUtm: false, gclid: false });
  });
});

describe('plainWebHost', () => {
  it.each([
    ['https://chatgpt.com/', 'chatgpt.com'],
    ['http://WWW.Perplexity.AI?q=1', 'www.perplexity.ai'],
    ['https://claude.ai', 'claude.ai'],
    ['https://claude.ai.#x', 'claude.ai'],
    ['HTTPS://a-b.example.co.uk/p', 'a-b.example.co.uk'],
  ])('%j -> %j', (raw, host) => {
    expect(plainWebHost(raw)).toBe(host);
    expect(hostOf(parseUrlLoose(raw)!)).toBe(host);
  });

  it.each([' https://x.com/', 'https://x.com:443/', 'https://u@x.com/', 'https://1.2.3.4/', 'https://0x7f.1/', 'https://[::1]/', 'https://xn--bcher-kva.de/', 'https://bücher.de/', 'https:\\\\x.com', 'https://x.com\\a', 'x.com/', '//x.com/', 'ftp://x.com/', 'https://x.com /'])(
    'leaves %j to the URL parser',
    (raw) => {
      expect(plainWebHost(raw)).toBeUndefined();
    },
  );

  it('agrees with the URL parser whenever it answers', () => {
    const part = fc.constantFrom('a', 'B', '0', '-', '.', '..', 'x1', 'com', 'xn--', '@', ':', ':80', '/', '?', '#', '%41', ' ', '\\', '1', '0x1');
    fc.assert(
      fc.property(fc.constantFrom('http://', 'https://', 'HTTP://'), fc.array(part, { maxLength: 8 }), (scheme, parts) => {
        const raw = scheme + parts.join('');
        const host = plainWebHost(raw);
        if (host !== undefined) expect(host).toBe(hostOf(parseUrlLoose(raw)!));
      }),
      { numRuns: 5_000 },
    );
  });
});
