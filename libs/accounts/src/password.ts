import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@analytics/schema';

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  /** Block size. */
  r: number;
  /** Parallelization. */
  p: number;
}

/**
 * OWASP Password Storage Cheat Sheet: "If Argon2id is not available, use scrypt with a minimum CPU/memory cost parameter
 * of (2^17), a minimum block size of 8 (1024 bytes), and a parallelization parameter of 1" (Node 20 has no Argon2id;
 * scrypt is node:crypto's, no dependency). Each hash then holds 128 * N * r = 128 MiB while it runs.
 */
export const OWASP_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 };

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
const memoryOf = (params: ScryptParams) => 128 * params.N * params.r;

export interface PasswordHasherOptions {
  params?: ScryptParams;
  /** Hashes running at once (PASSWORD_HASH_CONCURRENCY): each holds 128 * N * r bytes. */
  concurrency?: number;
  /** Hashes waiting for a turn; past it, 503 server_busy (sign-ins are also throttled per account and address). */
  maxWaiting?: number;
}

/**
 * Password hashing with scrypt under a bound on memory: at most `concurrency` hashes run at once, a bounded number wait
 * their turn, the rest are refused, so a flood of sign-ins costs at most concurrency * 128 MiB. A stored hash carries its
 * parameters (`scrypt$log2N$r$p$salt$hash`, base64url), so raising them later leaves old hashes verifiable.
 */
export class PasswordHasher {
  private readonly params: ScryptParams;
  private readonly concurrency: number;
  private readonly maxWaiting: number;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private dummy: Promise<string> | undefined;

  constructor(options: PasswordHasherOptions = {}) {
    this.params = options.params ?? OWASP_SCRYPT;
    this.concurrency = options.concurrency ?? 2;
    this.maxWaiting = options.maxWaiting ?? 64;
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_LENGTH);
    const derived = await this.derive(password, salt, this.params);
    return ['scrypt', Math.log2(this.params.N), this.params.r, this.params.p, salt.toString('base64url'), derived.toString('base64url')].join('$');
  }

  /** Whether `password` is the one `stored` was made from; a malformed or missing hash costs a dummy verification and is false. */
  async verify(password: string, stored: string | null): Promise<boolean> {
    const parsed = stored === null ? undefined : parseHash(stored);
    if (!parsed) return this.verifyNothing(password);
    const derived = await this.derive(password, parsed.salt, parsed.params);
    return derived.length === parsed.hash.length && timingSafeEqual(derived, parsed.hash);
  }

  /** The same work as a real verification, for an unknown email: a wrong password and an unknown email answer in the same time. */
  async verifyNothing(password: string): Promise<false> {
    this.dummy ??= this.hash(randomBytes(16).toString('hex'));
    await this.verify(password, await this.dummy);
    return false;
  }

  /** A stored hash made with other parameters than the current ones (rehashed at the next sign-in). */
  needsRehash(stored: string | null): boolean {
    const parsed = stored === null ? undefined : parseHash(stored);
    return !parsed || parsed.params.N !== this.params.N || parsed.params.r !== this.params.r || parsed.params.p !== this.params.p;
  }

  protected async derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
    await this.turn();
    try {
      return await new Promise<Buffer>((resolve, reject) =>
        scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...params, maxmem: memoryOf(params) + 1024 * 1024 }, (e, key) => (e ? reject(e) : resolve(key))),
      );
    } finally {
      // The next waiting hash takes this slot over, or the slot is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private async turn(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return;
    }
    if (this.waiting.length >= this.maxWaiting) throw new ApiError('server_busy', { retry_after_s: 1 });
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
}

function parseHash(stored: string): { params: ScryptParams; salt: Buffer; hash: Buffer } | undefined {
  const m = /^scrypt\$(\d{1,2})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(stored);
  if (!m) return undefined;
  return { params: { N: 2 ** Number(m[1]), r: Number(m[2]), p: Number(m[3]) }, salt: Buffer.from(m[4]!, 'base64url'), hash: Buffer.from(m[5]!, 'base64url') };
}
