import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The note `npm start` keeps in DATA_DIR while it runs: how the tools (npm run admin, import, backup) find it. */
export const SERVER_NOTE_FILE = 'server.json';

export interface ServerNote {
  /** Where this machine's tools reach the server: loopback, the port it listens on. */
  url: string;
  pid: number;
  port: number;
  started_at: string;
}

/**
 * Writes DATA_DIR/server.json (whole, then renamed: a tool never reads half a note) and returns its removal, for a
 * clean shutdown. A server that dies leaves its note behind; the tools pass over a note whose pid is not running.
 */
export function writeServerNote(dataDir: string, port: number, now = new Date()): { note: ServerNote; remove: () => void } {
  const file = join(dataDir, SERVER_NOTE_FILE);
  const note: ServerNote = { url: `http://127.0.0.1:${port}`, pid: process.pid, port, started_at: now.toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(tmp, `${JSON.stringify(note, null, 2)}\n`);
  renameSync(tmp, file);
  return {
    note,
    remove: () => {
      // Only our own: a note another server wrote since (after this one stopped listening) stays.
      try {
        if ((JSON.parse(readFileSync(file, 'utf8')) as Partial<ServerNote>).pid === process.pid) rmSync(file, { force: true });
      } catch {
        // gone or unreadable: nothing of ours to remove
      }
    },
  };
}
