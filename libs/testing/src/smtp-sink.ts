import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  /** smtp://127.0.0.1:<port>, for smtpMailer. */
  url: string;
  /** Every mail received: its recipients and its data (headers and body), quoted-printable decoded. */
  received: Array<{ to: string[]; data: string }>;
  /** Waits for a mail to `email` and answers it. */
  mailTo(email: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

// Quoted-printable soft line breaks and escapes, as nodemailer writes long lines.
const decoded = (data: string) => data.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** A real SMTP server in-process (smtp-server) that keeps what it receives. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const received: SmtpSink['received'] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), data: decoded(data) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    received,
    async mailTo(email, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = received.find((m) => m.to.includes(email));
        if (mail) return mail.data;
        if (Date.now() > deadline) throw new Error(`no mail to ${email}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
