// A secret the tools read without showing it: a password (npm run admin -- setup), a key (npm run import).
import { createInterface } from 'node:readline';

/** One line from a pipe, or typed on the terminal without echo (raw mode: each key read, none written back). */
export async function readSecret(prompt) {
  if (!process.stdin.isTTY) {
    const lines = createInterface({ input: process.stdin });
    for await (const line of lines) {
      lines.close();
      return line;
    }
    return '';
  }
  process.stderr.write(prompt);
  process.stdin.setRawMode(true);
  process.stdin.setEncoding('utf8');
  process.stdin.resume();
  return new Promise((resolveSecret) => {
    let secret = '';
    const onData = (chunk) => {
      for (const c of chunk) {
        if (c === '\u0003') process.exit(130);
        if (c === '\r' || c === '\n' || c === '\u0004') {
          process.stdin.setRawMode(false);
          process.stdin.pause();
          process.stdin.off('data', onData);
          process.stderr.write('\n');
          return resolveSecret(secret);
        }
        secret = c === '\u007f' || c === '\b' ? secret.slice(0, -1) : secret + c;
      }
    };
    process.stdin.on('data', onData);
  });
}
