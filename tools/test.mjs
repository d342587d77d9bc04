#!/usr/bin/env node
// `npm test`: runs `nx <args>` with its output passed through live, then repeats at the very end every line of a suite
// skipped for a missing system binary (libs/testing's systemBinary prints them), and exits with nx's exit code.
// Extra arguments reach nx: `npm test -- -p sdk-browser,deploy-checks`.
// Every 10 minutes it names the test runs still going (project and age); one jest run past TEST_RUN_DEADLINE_MINUTES
// (default 25) is killed with what it started, and the whole run past TEST_DEADLINE_MINUTES (default 60) is ended: what
// is still running is printed, killed, and the exit code is 1. Jest bounds each test and hook
// (testTimeout) and exits after its last result (forceExit); this catches what neither reaches, such as a process stuck
// in a native call, so that a hang is a failure naming its suite instead of a CI run that never ends.
import { execFileSync, spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';

const MARKER = 'SKIPPED (missing system binary):';
const ANSI = /\x1b\[[0-9;]*m/g;

const nxPackage = createRequire(import.meta.url).resolve('nx/package.json');
const nx = join(dirname(nxPackage), 'dist/bin/nx.js');
// Piped output is not a terminal: keep nx's and jest's colours when ours is one.
const env = process.stdout.isTTY && !process.env.NO_COLOR ? { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1' } : process.env;
// Its own process group, so that a run past its deadline is killed whole.
const child = spawn(process.execPath, [nx, ...process.argv.slice(2)], { stdio: ['inherit', 'pipe', 'pipe'], env, detached: true });
const started = Date.now();
const deadlineMinutes = Number(process.env.TEST_DEADLINE_MINUTES || 60);

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

/** The rows of `rows` below the `roots` pids (children, their children, ...), the roots' own rows left out. */
function below(rows, roots) {
  const found = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) if (found.has(row.ppid) && !found.has(row.pid)) (found.add(row.pid), (grew = true));
  }
  return rows.filter((row) => found.has(row.pid) && !roots.includes(row.pid));
}

/** Every process below nx or in its process group (orphans of a killed parent stay in it): pid, seconds running, working directory (a jest run's is its project) and command line. */
function descendants() {
  let table;
  try {
    table = execFileSync('ps', ['-eo', 'pid=,ppid=,pgid=,etimes=,args='], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const rows = table
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/))
    .filter(Boolean)
    .map(([, pid, ppid, pgid, etimes, args]) => ({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), seconds: Number(etimes), args }));
  const grouped = rows.filter((row) => row.pgid === child.pid && row.pid !== child.pid).map((row) => row.pid);
  return [...rows.filter((row) => grouped.includes(row.pid)), ...below(rows, [child.pid, ...grouped])].map((row) => {
    let cwd = '?';
    try {
      cwd = readlinkSync(`/proc/${row.pid}/cwd`);
    } catch {
      // gone meanwhile, or not ours to read
    }
    return { ...row, cwd };
  });
}
const minutes = (seconds) => `${Math.round(seconds / 60)} min`;
const project = (p) => p.cwd.replace(`${process.cwd()}/`, '');

/** Prints each process (age, directory, command line), then kills it. */
function killEach(processes) {
  for (const p of processes) process.stderr.write(`  pid ${p.pid} (parent ${p.ppid}), ${minutes(p.seconds)}, in ${project(p)}: ${p.args.slice(0, 300)}\n`);
  for (const p of processes) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

// One jest run past this is ended on its own (the longest take ~10 minutes on a loaded 2-core machine): nx counts its
// task failed and goes on, and the processes it had running are named.
const runDeadlineMinutes = Number(process.env.TEST_RUN_DEADLINE_MINUTES || 25);
let checks = 0;
const heartbeat = setInterval(() => {
  const all = descendants();
  // The jest runs, not their workers.
  const runs = all.filter((p) => /node_modules\/\.bin\/jest|jest-cli|jest\/bin/.test(p.args));
  if (++checks % 10 === 0 && runs.length > 0) {
    process.stderr.write(`\ntest: ${minutes((Date.now() - started) / 1000)} in; running: ${runs.map((p) => `${project(p)} (${minutes(p.seconds)})`).join(', ')}\n`);
  }
  for (const run of runs) {
    if (run.seconds < runDeadlineMinutes * 60) continue;
    process.stderr.write(`\ntest: FAILED: the jest run of ${project(run)} is still going after ${minutes(run.seconds)} (TEST_RUN_DEADLINE_MINUTES); killing it and what it started:\n`);
    killEach([...below(all, [run.pid]), run]);
    process.exitCode = 1;
  }
}, 60_000);
heartbeat.unref();

function killAll(why) {
  process.stderr.write(`\ntest: FAILED: ${why}; killing what runs:\n`);
  killEach(descendants());
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 5_000).unref();
}
const deadline = setTimeout(() => killAll(`still running after ${deadlineMinutes} minutes (TEST_DEADLINE_MINUTES)`), deadlineMinutes * 60_000);
deadline.unref();
// nx has exited, but a process it left behind still holds its output open (so 'close' would never come).
let held;
child.on('exit', () => {
  held = setTimeout(() => killAll('nx exited a minute ago and a process it started still holds its output open'), 60_000);
});

child.on('close', (code, signal) => {
  clearInterval(heartbeat);
  clearTimeout(deadline);
  clearTimeout(held);
  if (skipped.size > 0) {
    process.stdout.write(`\n${skipped.size} suite(s) did not run because a system binary is missing (install it and run npm test again):\n`);
    for (const line of skipped) process.stdout.write(`  ${line}\n`);
  }
  const nxCode = code ?? 128 + (constants.signals[signal] ?? 0);
  process.exitCode = nxCode !== 0 ? nxCode : (process.exitCode ?? 0); // a run killed above keeps its 1
});
