import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, createWriteStream, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';

/** A free TCP port on loopback (the kernel's pick, released just before use). */
export const freePort = () =>
  new Promise<number>((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => done(port));
    });
  });

export interface Started {
  name: string;
  proc: ChildProcess;
  port: number;
  /** Everything it printed so far. */
  output: () => string;
}

/**
 * Spawns a Node entry point (or `command`, e.g. `sh` running a script that execs one) and resolves with the port of the
 * JSON line `{"msg":"listening","port":N}` it prints (every app's log line, and the harness's). Output also goes to
 * `logFile` when given.
 */
export function startNode(
  name: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; command?: string; logFile?: string; timeoutMs?: number; onSpawn?: (proc: ChildProcess) => void },
): Promise<Started> {
  const proc = spawn(options.command ?? process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  options.onSpawn?.(proc);
  const log = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  let out = '';
  const output = () => out;
  const onChunk = (chunk: Buffer) => {
    out += chunk.toString();
    log?.write(chunk);
  };
  proc.stdout!.on('data', onChunk);
  proc.stderr!.on('data', onChunk);
  proc.once('exit', () => log?.end());
  return new Promise((done, fail) => {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      fail(new Error(`${name} did not start within ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    const onData = () => {
      for (const line of out.split('\n')) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        done({ name, proc, port: (JSON.parse(line) as { port: number }).port, output });
        return;
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${name} exited with ${code} before listening:\n${out}`));
    });
  });
}

/** SIGTERM (the graceful shutdown every app implements), SIGKILL after `graceMs`; resolves once it exited. */
export const stopProcess = (proc: ChildProcess | undefined, graceMs = 15_000) =>
  new Promise<void>((done) => {
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return done();
    const force = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(force);
      done();
    });
    proc.kill('SIGTERM');
  });

/** GET on loopback; the status, or 0 when nothing answered. */
export const getStatus = (port: number, path: string) =>
  new Promise<number>((done) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 5_000 }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('error', () => done(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });

/** Polls `path` until it answers 200 (or the process exits, or `timeoutMs` passes). */
export async function waitFor200(name: string, port: number, path: string, proc: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await getStatus(port, path)) !== 200) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${name} exited before ${path} answered 200`);
    if (Date.now() > until) throw new Error(`${name} did not answer ${path} with 200 within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Debian's nginx serving docker/nginx.conf, copied unchanged into `prefix`, with the per-environment includes written
 * for loopback: each upstream's servers (`upstreams`: name -> ports) and the listen port. `nginx -t` first. The
 * access log (nginx.conf sends it to stdout, as in a container) lands in `prefix/nginx.log`. `dashboardDir` (the
 * dashboard's build, dist/apps/dashboard) is linked where nginx.conf serves it from, as the proxy image copies it.
 */
export async function startNginx(bin: string, nginxConf: string, prefix: string, upstreams: Record<string, number[]>, port: number, dashboardDir?: string): Promise<Started> {
  mkdirSync(join(prefix, 'conf/nginx.d'), { recursive: true });
  if (dashboardDir) {
    // A DATA_DIR used again (npm run topology's default) holds the link of the last run.
    rmSync(join(prefix, 'dashboard'), { force: true });
    symlinkSync(dashboardDir, join(prefix, 'dashboard'));
  }
  chmodSync(prefix, 0o755); // nginx's workers (nobody, when started as root) use the temp dirs under the prefix
  copyFileSync(nginxConf, join(prefix, 'conf/nginx.conf'));
  const lines = Object.entries(upstreams).map(([name, ports]) => `upstream ${name} { ${ports.map((p) => `server 127.0.0.1:${p};`).join(' ')} keepalive 4; }\n`);
  writeFileSync(join(prefix, 'conf/nginx.d/upstreams.conf'), lines.join(''));
  writeFileSync(join(prefix, 'conf/nginx.d/listen.conf'), `listen 127.0.0.1:${port};\n`);
  const args = ['-p', `${prefix}/`, '-c', join(prefix, 'conf/nginx.conf')];
  // A file stands in for /dev/stdout and stderr (a socket cannot).
  const log = join(prefix, 'nginx.log');
  const logFd = openSync(log, 'a');
  const test = spawnSync(bin, ['-t', ...args, '-g', `pid ${prefix}/nginx.pid;`], { stdio: ['ignore', logFd, logFd] });
  if (test.status !== 0 || !readFileSync(log, 'utf8').includes('test is successful')) {
    closeSync(logFd);
    throw new Error(`nginx -t rejects docker/nginx.conf:\n${readFileSync(log, 'utf8')}`);
  }
  const proc = spawn(bin, [...args, '-g', `pid ${prefix}/nginx.pid; daemon off;`], { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const started: Started = { name: 'nginx', proc, port, output: () => readFileSync(log, 'utf8') };
  try {
    await waitFor200('nginx', port, '/healthz', proc, 10_000);
  } catch (e) {
    await stopProcess(proc);
    throw new Error(`${(e as Error).message}:\n${started.output()}`);
  }
  return started;
}
