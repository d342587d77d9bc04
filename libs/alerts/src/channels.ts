import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Mailer } from '@analytics/accounts';
import type { AlertChannelKind } from '@analytics/schema';
import { OutboundRefused, type Resolve, UnresolvedHost, checkedAddress } from './address-guard';

/** A webhook's answer is read (and dropped) up to this many bytes; the connection is closed past it. */
export const WEBHOOK_ANSWER_BYTES = 64 * 1024;
/** A webhook or Slack POST that has no answer within this is a timeout (retried). */
export const WEBHOOK_TIMEOUT_MS = 5_000;

/** What a delivery sends, as stored with it (alert_deliveries.message): the body is made once, so retries send the same bytes. */
export type ChannelMessage =
  | { email: { to: string[]; subject: string; text: string; html: string } }
  | { webhook: { url: string; secret: string; body: string } }
  | { slack: { webhook_url: string; body: string } };

/** An attempt's outcome: sent, or failed (retried when `retry`: a 5xx, a timeout, a connection or DNS failure). */
export type Attempt = { ok: true } | { ok: false; retry: boolean; error: string };

export interface ChannelOptions {
  /** The mail of SMTP_URL; without it an email channel fails at once ("SMTP_URL is not set"). */
  mailer?: Mailer;
  /** ALERTS_ALLOW_PRIVATE_URLS=true: the address guard is off. */
  allowPrivate: boolean;
  resolve?: Resolve;
  timeoutMs?: number;
}

export const channelOf = (message: ChannelMessage): AlertChannelKind => ('email' in message ? 'email' : 'webhook' in message ? 'webhook' : 'slack');

/** `X-Signature: sha256=<hex HMAC-SHA256 of the raw body with the secret>`. */
export const signatureOf = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Sends one message once. Never throws: every failure is an Attempt. */
export async function attempt(message: ChannelMessage, options: ChannelOptions): Promise<Attempt> {
  if ('email' in message) return sendMail(message.email, options.mailer);
  if ('webhook' in message) return post(message.webhook.url, message.webhook.body, { 'x-signature': signatureOf(message.webhook.body, message.webhook.secret) }, options);
  return post(message.slack.webhook_url, message.slack.body, {}, options);
}

async function sendMail(mail: { to: string[]; subject: string; text: string; html: string }, mailer: Mailer | undefined): Promise<Attempt> {
  if (!mailer) return { ok: false, retry: false, error: 'SMTP_URL is not set: no mail can be sent' };
  try {
    await mailer.send({ to: mail.to.join(', '), subject: mail.subject, text: mail.text, html: mail.html });
    return { ok: true };
  } catch (e) {
    // A permanent SMTP refusal (5xx) is not retried; a connection failure or a 4xx is.
    const code = (e as { responseCode?: number }).responseCode;
    return { ok: false, retry: !(typeof code === 'number' && code >= 500), error: `mail: ${(e as Error).message}` };
  }
}

/** A lookup that answers the address the guard checked: the connection goes where the check looked. */
export const pinned = (target: { address: string; family: 4 | 6 }): LookupFunction =>
  ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;

/** POSTs JSON to a checked address within the timeout; the status decides (2xx sent, 5xx retried, others failed). */
async function post(url: string, body: string, headers: Record<string, string>, options: ChannelOptions): Promise<Attempt> {
  let target: { address: string; family: 4 | 6 } | undefined;
  try {
    target = await checkedAddress(url, options);
  } catch (e) {
    if (e instanceof OutboundRefused) return { ok: false, retry: e instanceof UnresolvedHost, error: e.message };
    throw e;
  }
  const u = new URL(url);
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const finish = (result: Attempt) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const request = (u.protocol === 'https:' ? https : http).request(
      u,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'event-analytics-alerts/1', ...headers },
        ...(target ? { lookup: pinned(target) } : {}),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > WEBHOOK_ANSWER_BYTES) response.destroy();
        });
        response.on('error', () => {});
        if (status >= 200 && status < 300) finish({ ok: true });
        else finish({ ok: false, retry: status >= 500, error: `${u.host} answered ${status}` });
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ ok: false, retry: true, error: `${u.host}: no answer within ${timeoutMs / 1000} s` });
    }, timeoutMs);
    // The timer also bounds an answer's body: it ends with the connection.
    request.on('close', () => clearTimeout(timer));
    request.on('error', (e) => finish({ ok: false, retry: true, error: `${u.host}: ${e.message}` }));
    request.end(body);
  });
}
