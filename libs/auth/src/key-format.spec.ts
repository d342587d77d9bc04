import { extractPrefix, hashSecret, mintKey, parseApiKey, randomBase62, verifySecret } from './key-format';

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
