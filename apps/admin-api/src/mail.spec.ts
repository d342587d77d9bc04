import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SMTPServer } from 'smtp-server';
import { type Mailer, smtpMailer } from '@analytics/accounts';

import { PASSWORD, type People, setUpPeople, uniqueEmail } from './test-people';
import { memoryPglitePort } from '@analytics/testing';

const PUBLIC_URL = 'https://analytics.example.com';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A real SMTP server in-process: every mail it receives, as sent (headers and body). */
const received: Array<{ to: string[]; data: string }> = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, session, callback) {
    let data = '';
    stream.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    stream.on('end', () => {
      received.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
      callback();
    });
  },
});

// Quoted-printable soft line breaks and escapes, as nodemailer writes long lines.
const decoded = (data: string) => data.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

async function mailTo(email: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mail = received.find((m) => m.to.includes(email));
    if (mail) return decoded(mail.data);
    if (Date.now() > deadline) throw new Error(`no mail to ${email}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let p: People;
let mailer: Mailer;
beforeAll(async () => {
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  mailer = smtpMailer(`smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`, 'Event Analytics <noreply@example.com>');
  p = await setUpPeople(await memoryPglitePort(), { mailer, publicUrl: PUBLIC_URL });
}, 180_000);
afterAll(async () => {
  mailer.close();
  await new Promise<void>((resolve) => smtp.close(resolve));
  await p.db.close();
});

describe('password reset by mail (SMTP_URL, MAIL_FROM, PUBLIC_URL)', () => {
  it('mails a one-time link valid one hour; the new password ends every session and signs in; the link works once', async () => {
    const user = await p.addMember(p.orgId, 'editor');
    const before = (await p.accounts.sessions.create(user, 'tests')).token;
    const asked = await request(p.app).post('/auth/password-reset').send({ email: user.email });
    expect([asked.status, asked.body]).toEqual([202, { ok: true }]);
    const mail = await mailTo(user.email);
    expect(mail).toMatch(/^From: Event Analytics <noreply@example\.com>/m);
    expect(mail).toMatch(/^Subject: Reset your password/m);
    expect(mail).toContain('text/html');
    const token = new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}/#reset=(rst_[0-9A-Za-z]+)`).exec(mail)?.[1];
    expect(token).toBeDefined();

    const confirmed = await request(p.app).post('/auth/password-reset/confirm').send({ token, password: 'a brand new password' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ token: expect.stringMatching(/^ses_/), expires_at: expect.any(String), user });
    expect((await request(p.app).get('/auth/me').set(bearer(before))).status).toBe(401);
    expect((await request(p.app).get('/auth/me').set(bearer(confirmed.body.token))).status).toBe(200);
    expect((await request(p.app).post('/auth/login').send({ email: user.email, password: 'a brand new password' })).status).toBe(200);
    expect((await request(p.app).post('/auth/login').send({ email: user.email, password: PASSWORD })).status).toBe(401);
    const again = await request(p.app).post('/auth/password-reset/confirm').send({ token, password: 'yet another password' });
    expect([again.status, again.body]).toEqual([400, { error: 'invalid_token', details: { reason: 'used' } }]);
  });

  it('answers 202 for an unknown email too, and sends nothing', async () => {
    const nobody = uniqueEmail('nobody');
    const count = received.length;
    const asked = await request(p.app).post('/auth/password-reset').send({ email: nobody });
    expect([asked.status, asked.body]).toEqual([202, { ok: true }]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(received.length).toBe(count);
  });

  it('refuses a link an hour old with 400 invalid_token', async () => {
    const user = await p.addMember(p.orgId, 'viewer');
    const link = await p.accounts.signIn.resetLink(user.email, PUBLIC_URL);
    p.clock.now += 3_600_000;
    const res = await request(p.app).post('/auth/password-reset/confirm').send({ token: link!.reset_url.split('#reset=')[1], password: 'a brand new password' });
    expect([res.status, res.body]).toEqual([400, { error: 'invalid_token', details: { reason: 'expired' } }]);
  });
});

describe('invitation mail', () => {
  it('mails the invitation link (text and HTML) to the invited address', async () => {
    const email = uniqueEmail('invited');
    const created = await request(p.app).post(`/admin/orgs/${p.orgId}/invitations`).set(bearer(await p.tokenOf('admin'))).send({ email, role: 'viewer' });
    expect(created.body.accept_url).toBe(`${PUBLIC_URL}/#invitation=${created.body.token}`);
    const mail = await mailTo(email);
    expect(mail).toMatch(/^Subject: Join Default on Event Analytics/m);
    expect(mail).toContain(created.body.accept_url);
    expect(mail).toContain('as viewer');
  });
});
