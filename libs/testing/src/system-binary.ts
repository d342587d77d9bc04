import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { SKIP_MARKER, currentTestFile } from '@analytics/auth/testing';

export { SKIP_MARKER };

/** A program from a Debian package that a suite drives (never a downloaded copy). */
export interface SystemBinarySpec {
  /** What the skip line calls it: `nginx`. */
  name: string;
  /** Environment variable naming the program's path; when set it is the only place looked at. */
  env: string;
  /** Absolute paths, or names looked up on PATH, tried in order when `env` is not set. */
  defaults: string[];
  /** Debian package that installs it: `nginx-light`. */
  aptPackage: string;
}

export interface SystemBinary {
  readonly spec: SystemBinarySpec;
  readonly found: boolean;
  /** Path of the program; throws when it is missing (use it only inside `describe`). */
  readonly path: string;
  /** Declares a suite needing the program: run when found, else reported as skipped with one line on stderr. */
  describe(name: string, fn: () => void): void;
  /**
   * Declares one test needing the program, in its place among its siblings (jest runs a nested suite after them,
   * too late for a test that shares a suite's running processes): run when found, else skipped with one line on stderr.
   */
  it(name: string, fn: jest.ProvidesCallback, timeout?: number): void;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first candidate that is an executable file (absolute, or a bare name found in a PATH directory). */
export function findExecutable(candidates: readonly string[], searchPath: string): string | undefined {
  for (const candidate of candidates) {
    if (isAbsolute(candidate) || candidate.includes('/')) {
      if (executable(candidate)) return candidate;
      continue;
    }
    for (const dir of searchPath.split(delimiter).filter(Boolean)) {
      if (executable(join(dir, candidate))) return join(dir, candidate);
    }
  }
  return undefined;
}

/** The one loud line of a skipped suite: which suite, which program, where it was looked for, how to install it. */
export function skipLine(suite: string, spec: SystemBinarySpec, env: NodeJS.ProcessEnv): string {
  const where = env[spec.env] ? `${spec.env}=${env[spec.env]}` : [`${spec.env} unset`, ...spec.defaults].join(', ');
  return `${SKIP_MARKER} ${suite} needs ${spec.name} (looked at ${where}); enable it with: apt-get update && apt-get install -y ${spec.aptPackage}`;
}

/**
 * A system program a test file needs. When it is missing the suites declared through `describe` are skipped (jest
 * counts them as skipped, never passed) and each prints one line starting with SKIP_MARKER, straight to stderr so
 * jest's console buffering cannot hide it; `npm test` repeats those lines at its end and `.ci/run` fails on them.
 */
export function systemBinary(
  spec: SystemBinarySpec,
  { env = process.env, write = (line: string) => void process.stderr.write(`${line}\n`) }: { env?: NodeJS.ProcessEnv; write?: (line: string) => void } = {},
): SystemBinary {
  const override = env[spec.env];
  const resolved = findExecutable(override ? [override] : spec.defaults, env['PATH'] ?? '');
  return {
    spec,
    found: resolved !== undefined,
    get path(): string {
      if (resolved === undefined) throw new Error(`${spec.name} is not installed (apt-get install -y ${spec.aptPackage}): declare the suite with describe`);
      return resolved;
    },
    describe(name, fn) {
      if (resolved !== undefined) return describe(name, fn);
      const file = currentTestFile();
      write(skipLine(file ? `${file} › ${name}` : name, spec, env));
      describe.skip(name, fn);
    },
    it(name, fn, timeout) {
      if (resolved !== undefined) return it(name, fn, timeout);
      const file = currentTestFile();
      write(skipLine(file ? `${file} › ${name}` : name, spec, env));
      it.skip(name, fn, timeout);
    },
  };
}
