import { relative, join } from 'node:path';

// The loud skip of a suite whose program or server is missing. It lives here, with the PostgreSQL test backends,
// because auth's own specs print it and auth cannot import libs/testing (which imports auth and re-exports this).

/** Starts every line about a suite skipped for a missing program or server; tools/test.mjs and .ci/run look for it. */
export const SKIP_MARKER = 'SKIPPED (missing system binary):';

const WORKSPACE = join(__dirname, '../../..');

/** The spec file being collected, relative to the workspace, so the skip line says which file to look at. */
export function currentTestFile(): string | undefined {
  const testPath = typeof expect === 'function' ? expect.getState().testPath : undefined;
  return testPath ? relative(WORKSPACE, testPath) : undefined;
}

/** A server from a Debian package that a suite talks to, found through an environment variable (.ci/run sets it). */
export interface SystemServerSpec {
  /** What the skip line calls it: `PostgreSQL`. */
  name: string;
  /** Environment variable holding its URL: `TEST_DATABASE_URL`. */
  env: string;
  /** A value to export: `postgres://postgres@127.0.0.1:5432/test`. */
  example: string;
  /** Debian package that installs it: `postgresql`. */
  aptPackage: string;
}

export interface SystemServer {
  /** The URL when the variable is set. */
  readonly url: string | undefined;
  /** Whether the variable is set; when it is not, prints the marked line saying `what` does not run. */
  available(what: string): boolean;
  /** Declares a suite needing the server: run when its variable is set, else skipped with one marked line on stderr. */
  describe(name: string, fn: () => void): void;
  /** The same for one test. */
  it(name: string, fn: () => Promise<unknown>, timeoutMs?: number): void;
}

/**
 * A server a test needs, skipped as loudly as a missing program: the same SKIP_MARKER line, which `npm test` repeats
 * and `.ci/run` fails on. Set, the variable is trusted: a server that is down fails the test instead.
 */
export function systemServer(
  spec: SystemServerSpec,
  { env = process.env, write = (line: string) => void process.stderr.write(`${line}\n`) }: { env?: NodeJS.ProcessEnv; write?: (line: string) => void } = {},
): SystemServer {
  const url = env[spec.env] || undefined;
  const available = (what: string) => {
    if (url) return true;
    const file = currentTestFile();
    write(`${SKIP_MARKER} ${file ? `${file} › ${what}` : what} needs ${spec.name} (${spec.env} unset); enable it with: apt-get update && apt-get install -y ${spec.aptPackage}, then export ${spec.env}=${spec.example}`);
    return false;
  };
  return {
    url,
    available,
    describe: (name, fn) => (available(name) ? describe : describe.skip)(name, fn),
    it: (name, fn, timeoutMs) => (available(name) ? it : it.skip)(name, fn, timeoutMs),
  };
}

/** The servers of the suites that need real PostgreSQL or Redis; .ci/run exports both variables. */
export const POSTGRES: SystemServerSpec = { name: 'PostgreSQL', env: 'TEST_DATABASE_URL', example: 'postgres://postgres@127.0.0.1:5432/test', aptPackage: 'postgresql' };
export const REDIS: SystemServerSpec = { name: 'Redis', env: 'TEST_REDIS_URL', example: 'redis://127.0.0.1:6379', aptPackage: 'redis-server' };
