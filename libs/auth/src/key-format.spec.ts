import { extractPrefix, hashSecret, mintKey, parseApiKey, randomBase62, verifySecret } from './key-format';
import { normalizeOrigin, originAllowed } from './origin';

describe('key format', () => {
  it('mints {kind}_{env}_{prefix}_{secret} keys with base62 parts that parse back', () => {
    for (const kind of ['pk', 'sk', 'rk', 'ak'] as const) {
      const k = mintKey(kind, 'test');
      expect(k.key).toMatch(/^(pk|sk|rk|ak)_test_[0-9A-Za-z]{12}_[0-9A-Za-z]{32}$/);
      expect(parseApiKey(k.key)).toEqual({ kind, env: 'test', prefix: k.prefix, secret: k.secret });
    }
  });

  it('draws secrets with at least 128 bits of randomness (32 base62 chars, all distinct over 1000 draws)', () => {
    expect(32 * Math.log2(62)).toBeGreaterThan(128);
    const seen = new Set(Array.from({ length: 1000 }, () => randomBase62(32)));
    expect(seen.size).toBe(1000);
  });

  it.each(['', 'sk_live', 'xx_live_abc_def', 'sk_prod_abc_def', 'sk_live_ab-c_def', 'sk_live_abc_de_f', 'Bearer sk_live_a_b'])('rejects %j as malformed', (raw) => {
    expect(parseApiKey(raw)).toBeNull();
  });

  it('verifies secrets against their hash and nothing else', () => {
    const h = hashSecret('s3cret');
    expect(verifySecret('s3cret', h)).toBe(true);
    expect(verifySecret('s3creT', h)).toBe(false);
    expect(verifySecret('s3cret', 'abcd')).toBe(false);
  });

  it('extracts a prefix from a bare prefix, kind_env_prefix, or a whole key', () => {
    const k = mintKey('sk');
    expect(extractPrefix(k.prefix)).toBe(k.prefix);
    expect(extractPrefix(`sk_live_${k.prefix}`)).toBe(k.prefix);
    expect(extractPrefix(k.key)).toBe(k.prefix);
    expect(extractPrefix('../etc')).toBeNull();
  });
});

describe('origins', () => {
  it.each([
    ['https://Shop.Example.com/', 'https://shop.example.com'],
    ['https://shop.example.com:443', 'https://shop.example.com'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['*', '*'],
    ['https://*.example.com', 'https://*.example.com'],
    ['ftp://x.example', null],
    ['https://shop.example.com/path', null],
    ['nonsense', null],
  ])('normalises %s to %s', (input, out) => expect(normalizeOrigin(input)).toBe(out));

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
});
