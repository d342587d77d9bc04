import { ApiError } from '@analytics/schema';
import { OWASP_SCRYPT, PasswordHasher } from './password';

const CHEAP = { N: 1024, r: 8, p: 1 };

describe('PasswordHasher', () => {
  it("uses OWASP's scrypt parameters by default (N = 2^17, r = 8, p = 1) and stores them with the hash", async () => {
    expect(OWASP_SCRYPT).toEqual({ N: 2 ** 17, r: 8, p: 1 });
    const hash = await new PasswordHasher().hash('correct horse battery');
    expect(hash).toMatch(/^scrypt\$17\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await new PasswordHasher({ params: CHEAP }).verify('correct horse battery', hash)).toBe(true);
  }, 180_000);

  it('verifies the right password only, salts each hash, and asks for a rehash of other parameters', async () => {
    const hasher = new PasswordHasher({ params: CHEAP });
    const [a, b] = [await hasher.hash('correct horse battery'), await hasher.hash('correct horse battery')];
    expect(a).not.toBe(b);
    expect(await hasher.verify('correct horse battery', a)).toBe(true);
    expect(await hasher.verify('correct horse batterY', a)).toBe(false);
    expect(await hasher.verify('anything', null)).toBe(false);
    expect(await hasher.verify('anything', 'not a hash')).toBe(false);
    expect(hasher.needsRehash(a)).toBe(false);
    expect(new PasswordHasher({ params: { ...CHEAP, N: 2048 } }).needsRehash(a)).toBe(true);
  });

  it('runs at most `concurrency` hashes at once, queues `maxWaiting`, and refuses the rest with 503 server_busy', async () => {
    const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    const original = crypto.scrypt;
    let running = 0;
    let peak = 0;
    const spy = jest.spyOn(crypto, 'scrypt').mockImplementation(((password: string, salt: Buffer, length: number, options: object, done: (e: Error | null, key: Buffer) => void) => {
      peak = Math.max(peak, ++running);
      original(password, salt, length, options, (e, key) => {
        running--;
        done(e, key);
      });
    }) as never);
    try {
      const hasher = new PasswordHasher({ params: CHEAP, concurrency: 2, maxWaiting: 3 });
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => hasher.hash('correct horse battery').then(() => 'ok', (e: unknown) => (e instanceof ApiError ? `${e.status} ${e.code}` : String(e)))),
      );
      expect(outcomes.sort()).toEqual([...Array(3).fill('503 server_busy'), ...Array(5).fill('ok')]);
      expect(peak).toBe(2);
      // The slots are free again.
      expect(await hasher.hash('correct horse battery')).toMatch(/^scrypt\$/);
    } finally {
      spy.mockRestore();
    }
  });
});
