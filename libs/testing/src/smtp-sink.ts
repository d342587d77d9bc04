import { smtpCapture } from './smtp-capture';

/** smtpCapture's mails by recipient, for the specs that wait for one mail to one address. */
export interface SmtpSink {
  /** smtp://127.0.0.1:<port>, for smtpMailer. */
  url: string;
  /** Every mail received: its recipients and its data (headers and body), quoted-printable decoded. */
  readonly received: Array<{ to: string[]; data: string }>;
  /** Waits for a mail to `email` and answers it (decoded). */
  mailTo(email: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

/** A real SMTP server in-process (smtpCapture) that keeps what it receives. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const capture = await smtpCapture();
  return {
    url: capture.url,
    get received() {
      return capture.received.map((m) => ({ to: m.to, data: m.decoded }));
    },
    async mailTo(email, timeoutMs = 15_000) {
      const [mail] = await capture.until(1, (m) => m.to.includes(email), timeoutMs);
      return mail!.decoded;
    },
    close: () => capture.close(),
  };
}
