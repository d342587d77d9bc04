import { createTransport } from 'nodemailer';

/** One mail: a plain-text body and the same in simple HTML. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The Message-ID header (`<id@host>`); unset: nodemailer makes one. A retried report keeps its first one. */
  messageId?: string;
  /** Extra headers (List-Unsubscribe, List-Unsubscribe-Post of a report). */
  headers?: Record<string, string>;
}

/** Sends mail (password resets, invitations, later reports and alerts). */
export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** Mail over SMTP_URL (`smtp://user:pass@host:587`, `smtps://…:465`) from MAIL_FROM, with nodemailer. */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = createTransport(url);
  return {
    async send(mail) {
      const { headers, messageId, ...rest } = mail;
      await transport.sendMail({ from, ...rest, ...(messageId ? { messageId } : {}), ...(headers ? { headers } : {}) });
    },
    close: () => transport.close(),
  };
}
