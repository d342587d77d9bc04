import type { Role } from '@analytics/schema';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Plain text and a minimal HTML page of the same paragraphs, the link as a button. */
function compose(subject: string, paragraphs: string[], link: { text: string; url: string }, footer: string) {
  const text = [...paragraphs, `${link.text}: ${link.url}`, footer].join('\n\n');
  const html = [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:36em">',
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    `<p><a href="${escapeHtml(link.url)}" style="display:inline-block;padding:.5em 1em;background:#1f4fd1;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(link.text)}</a></p>`,
    `<p style="color:#555;font-size:.9em">${escapeHtml(footer)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

export function passwordResetMail(input: { link: string; expiresAt: string }) {
  return compose(
    'Reset your password',
    ['Someone (hopefully you) asked to reset the password of your Event Analytics account.'],
    { text: 'Choose a new password', url: input.link },
    `The link works once, until ${input.expiresAt} (UTC). If you did not ask, ignore this mail: your password stays as it is.`,
  );
}

export function invitationMail(input: { orgName: string; inviter: string | undefined; role: Role; link: string; expiresAt: string }) {
  return compose(
    `Join ${input.orgName} on Event Analytics`,
    [`${input.inviter ?? 'The operator'} invited you to the organization "${input.orgName}" as ${input.role}.`],
    { text: 'Accept the invitation', url: input.link },
    `The link works once, until ${input.expiresAt} (UTC).`,
  );
}
