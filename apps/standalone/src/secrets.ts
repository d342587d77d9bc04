import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Secrets {
  ADMIN_TOKEN: string;
  IP_HASH_SECRET: string;
  INTERNAL_SECRET: string;
}

/**
 * Secrets from the environment, else generated once and kept in DATA_DIR/secrets.json (mode 0600), so an
 * embedded install keeps its admin token and a stable daily IP hash across restarts. Returns which were generated.
 */
/**
 * 256 random bits, base64url, never beginning with '-': pasted after `--token` (npm run admin, backup), a leading dash
 * reads as an option and the tool refuses it (`--token=<value>` takes any value).
 */
export function newSecret(): string {
  for (;;) {
    const secret = randomBytes(32).toString('base64url');
    if (!secret.startsWith('-')) return secret;
  }
}

export function resolveSecrets(dataDir: string, env: Partial<Secrets>): { secrets: Secrets; generated: (keyof Secrets)[] } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'secrets.json');
  const stored: Partial<Secrets> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const generated: (keyof Secrets)[] = [];
  const pick = (name: keyof Secrets): string => {
    const fromEnv = env[name];
    if (fromEnv) return fromEnv;
    if (stored[name]) return stored[name]!;
    generated.push(name);
    return (stored[name] = newSecret());
  };
  const secrets = { ADMIN_TOKEN: pick('ADMIN_TOKEN'), IP_HASH_SECRET: pick('IP_HASH_SECRET'), INTERNAL_SECRET: pick('INTERNAL_SECRET') };
  if (generated.length > 0) writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  return { secrets, generated };
}
