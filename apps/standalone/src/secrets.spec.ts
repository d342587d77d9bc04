import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSecrets } from './secrets';

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
