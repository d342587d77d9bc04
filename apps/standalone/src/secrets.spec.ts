import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSecret, resolveSecrets } from './secrets';

it('generates missing secrets once, keeps them in DATA_DIR (0600), and prefers the environment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-'));
  const first = resolveSecrets(dir, {});
  expect(first.generated).toEqual(['ADMIN_TOKEN', 'IP_HASH_SECRET', 'INTERNAL_SECRET']);
  expect(first.secrets.ADMIN_TOKEN.length).toBeGreaterThanOrEqual(40);
  expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
  const second = resolveSecrets(dir, {});
  expect(second.generated).toEqual([]);
  expect(second.secrets).toEqual(first.secrets);
  expect(resolveSecrets(dir, { ADMIN_TOKEN: 'from-env' }).secrets.ADMIN_TOKEN).toBe('from-env');
  expect(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')).ADMIN_TOKEN).toBe(first.secrets.ADMIN_TOKEN);
});

it('never generates a secret beginning with a dash, which `--token <value>` would read as an option', () => {
  // One base64url draw in 64 begins with '-': 2,000 draws meet one with near certainty when nothing avoids it.
  const secrets = Array.from({ length: 2_000 }, newSecret);
  expect(secrets.filter((s) => s.startsWith('-'))).toEqual([]);
  expect(new Set(secrets.map((s) => s[0])).size).toBeGreaterThan(40);
  expect(secrets.every((s) => /^[A-Za-z0-9_-]{43}$/.test(s))).toBe(true);
});
