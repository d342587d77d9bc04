import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A mail the capture server accepted: its recipients and its whole message (headers and body, as sent). */
export interface CapturedMail {
  to: string[];
  data: string;
  /** The Message-ID header. */
  messageId: string | undefined;
  /** A header's value (unfolded), by its name in any case. */
  header(name: string): string | undefined;
  /** The message with quoted-printable soft breaks and escapes undone (HTML and text parts readable). */
  decoded: string;
}

export interface SmtpCapture {
  /** smtp://127.0.0.1:<port> */
  url: string;
  /** Every mail accepted (answered 250), in order. */
  received: CapturedMail[];
  /** Waits until `count` mails matching `match` were accepted (default 20 s), and returns them. */
  until(count: number, match?: (m: CapturedMail) => boolean, timeoutMs?: number): Promise<CapturedMail[]>;
  close(): Promise<void>;
}

const decode = (data: string) => data.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

function captured(to: string[], data: string): CapturedMail {
  const head = data.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const header = (name: string) => head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))?.slice(name.length + 1).trim();
  return { to, data, messageId: header('message-id'), header, decoded: decode(data) };
}

/**
 * A real SMTP server in-process (smtp-server, no TLS, no auth) that keeps what it accepts. `hold(to)`: a message to
 * those recipients is read but never answered (the sender waits in DATA, as when killed mid-send); `onHeld` says when.
 */
export async function smtpCapture(options: { hold?: (to: string[]) => boolean; onHeld?: (to: string[]) => void } = {}): Promise<SmtpCapture> {
  const received: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // A held connection is cut at close instead of waited for.
    closeTimeout: 100,
    onData(stream, session, callback) {
      const to = session.envelope.rcptTo.map((r) => r.address);
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
      stream.on('end', () => {
        if (options.hold?.(to)) {
          options.onHeld?.(to);
          return; // never answered: the message is not accepted
        }
        received.push(captured(to, data));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    received,
    async until(count, match = () => true, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.filter(match);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`${found.length} of ${count} mails arrived`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
