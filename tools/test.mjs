#!/usr/bin/env node
// `npm test`: runs `nx <args>` with its output passed through live, then repeats at the very end every line of a suite
// skipped for a missing system binary (libs/testing's systemBinary prints them), and exits with nx's exit code.
// Extra arguments reach nx: `npm test -- -p sdk-browser,deploy-checks`.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';

const MARKER = 'SKIPPED (missing system binary):';
const ANSI = /\x1b\[[0-9;]*m/g;

const nxPackage = createRequire(import.meta.url).resolve('nx/package.json');
const nx = join(dirname(nxPackage), 'dist/bin/nx.js');
// Piped output is not a terminal: keep nx's and jest's colours when ours is one.
const env = process.stdout.isTTY && !process.env.NO_COLOR ? { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1' } : process.env;
const child = spawn(process.execPath, [nx, ...process.argv.slice(2)], { stdio: ['inherit', 'pipe', 'pipe'], env });

const skipped = new Set();
function collect(stream, out) {
  let partial = '';
  stream.on('data', (chunk) => {
    out.write(chunk);
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop();
    for (const line of lines) remember(line);
  });
  stream.on('end', () => remember(partial));
}
function remember(line) {
  const plain = line.replace(ANSI, '');
  const at = plain.indexOf(MARKER);
  if (at !== -1) skipped.add(plain.slice(at).trim());
}
collect(child.stdout, process.stdout);
collect(child.stderr, process.stderr);

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));

child.on('close', (code, signal) => {
  if (skipped.size > 0) {
    process.stdout.write(`\n${skipped.size} suite(s) did not run because a system binary is missing (install it and run npm test again):\n`);
    for (const line of skipped) process.stdout.write(`  ${line}\n`);
  }
  process.exitCode = code ?? 128 + (constants.signals[signal] ?? 0);
});
