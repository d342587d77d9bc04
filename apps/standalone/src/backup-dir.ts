import { type Stats, constants } from 'node:fs';
import { access, chmod, mkdir, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/** The kernel's and devices' trees: nothing there is a folder for a backup, and some of it never answers a mkdir. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];
/** The whole check answers within this, whatever the filesystem does (a hung mount is refused, not waited on). */
export const BACKUP_DIR_CHECK_MS = 500;

const inside = (path: string, root: string) => path === root || path.startsWith(root === sep ? root : root + sep);
const systemTreeOf = (path: string) => SYSTEM_TREES.find((tree) => inside(path, tree));
const codeOf = (e: unknown) => (e as NodeJS.ErrnoException).code ?? String(e);

/** A folder to hold a backup: its absolute path, and where it ends up once every symbolic link is followed. */
export interface BackupDir {
  path: string;
  real: string;
}

/** Why a path cannot be a backup folder, as the `details` of `400 invalid_payload` say it. */
export class BackupDirRefusal extends Error {}

/** The nearest folder of `path` that exists (itself included) and the names below it that do not exist yet. */
async function nearestExisting(path: string): Promise<{ path: string; stats: Stats; missing: string[] }> {
  const missing: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    try {
      return { path: p, stats: await stat(p), missing };
    } catch (e) {
      // ENOTDIR: a part of it is a file; the walk up reaches that file and says so.
      if (codeOf(e) !== 'ENOENT' && codeOf(e) !== 'ENOTDIR') throw new BackupDirRefusal(`${p} cannot be examined (${codeOf(e)})`);
      missing.unshift(basename(p));
    }
  }
}

/** Where `path` ends up once the symbolic links of its existing part are followed. */
async function realOf(path: string): Promise<string> {
  const found = await nearestExisting(path);
  return join(await realpath(found.path), ...found.missing);
}

async function examine(raw: string, root: string | undefined): Promise<BackupDir> {
  if (raw.includes('\0')) throw new BackupDirRefusal('contains a NUL character');
  if (!isAbsolute(raw)) throw new BackupDirRefusal('must be an absolute path on the server (npm run backup resolves it for you)');
  if (raw.split('/').includes('..')) throw new BackupDirRefusal('must not contain ".." segments: name the folder itself');
  const path = resolve(raw);
  const tree = systemTreeOf(path);
  if (tree) throw new BackupDirRefusal(`is under ${tree}, which holds no backups`);
  const found = await nearestExisting(path);
  if (!found.stats.isDirectory()) throw new BackupDirRefusal(`${found.path} is not a directory`);
  const real = join(await realpath(found.path), ...found.missing);
  const realTree = systemTreeOf(real);
  if (realTree) throw new BackupDirRefusal(`leads to ${real} through a symbolic link, under ${realTree}, which holds no backups`);
  if (root !== undefined) {
    const realRoot = await realOf(root);
    if (!inside(real, realRoot) || real === realRoot) {
      throw new BackupDirRefusal(`must be a folder under BACKUP_DIR (${root})${real === path ? '' : `; it leads to ${real} through a symbolic link`}`);
    }
  }
  if (found.missing.length === 0 && (await readdir(path)).length > 0) throw new BackupDirRefusal(`${path} exists and is not empty: name a new or empty directory`);
  try {
    await access(found.path, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw new BackupDirRefusal(`${found.path} is not writable by the server (${codeOf(e)})`);
  }
  return { path, real };
}

/**
 * Checks a folder named for a backup before anything is written: absolute, without NUL or "..", outside /proc, /sys
 * and /dev (as named and once its links are followed), under BACKUP_DIR when that is set, new or empty, and its nearest
 * existing folder a directory the server may write. Throws BackupDirRefusal; answers within BACKUP_DIR_CHECK_MS.
 */
export async function checkBackupDir(raw: string, root: string | undefined): Promise<BackupDir> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BackupDirRefusal(`could not be examined within ${BACKUP_DIR_CHECK_MS} ms (a hung or slow filesystem?)`)), BACKUP_DIR_CHECK_MS);
  });
  try {
    return await Promise.race([examine(raw, root), deadline]);
  } catch (e) {
    if (e instanceof BackupDirRefusal) throw e;
    throw new BackupDirRefusal(`cannot be examined (${codeOf(e)})`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Creates the checked folder, one level at a time and mode 0700 (Node's recursive mkdir loops forever on some paths,
 * /proc/self/x among them), or makes the existing empty one 0700; then checks it still leads where it did.
 */
export async function createBackupDir(dir: BackupDir): Promise<void> {
  try {
    const found = await nearestExisting(dir.path);
    let p = found.path;
    for (const name of found.missing) {
      p = join(p, name);
      await mkdir(p, { mode: 0o700 });
    }
    await chmod(dir.path, 0o700);
  } catch (e) {
    if (e instanceof BackupDirRefusal) throw e;
    throw new BackupDirRefusal(`could not be created (${codeOf(e)})`);
  }
  if ((await realpath(dir.path)) !== dir.real) throw new BackupDirRefusal(`changed while it was created: it now leads to ${await realpath(dir.path)}`);
}

/** Makes every folder under `dir` (itself included) 0700 and every file 0600: a backup holds the admin token and all events. */
export async function restrictModes(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await restrictModes(path);
    else if (entry.isFile()) await chmod(path, 0o600);
  }
}
