// Writes build outputs so that a build running while servers or other suites read dist/ never disturbs them: a file
// whose bytes are unchanged is not touched at all, and a changed one is written beside it and renamed over it (a
// reader sees the old file or the new one, never a half-written one). `npm test` runs suites in parallel and several
// of them build before serving dist/apps/*; with these writes their builds agree instead of racing.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

function sameBytes(path, contents) {
  try {
    return Buffer.from(contents).equals(readFileSync(path));
  } catch {
    return false;
  }
}

let sequence = 0;
/** Writes `contents` to `path` unless it already holds exactly them; atomic (a temporary file renamed over it). */
export function writeIfChanged(path, contents) {
  if (sameBytes(path, contents)) return;
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${sequence++}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

/** esbuild's `outputFiles` (a build with `write: false`), each written with writeIfChanged. */
export function writeOutputFiles(result) {
  for (const file of result.outputFiles) writeIfChanged(file.path, file.contents);
}

/** copyFileSync, through writeIfChanged. */
export function copyIfChanged(from, to) {
  writeIfChanged(to, readFileSync(from));
}
