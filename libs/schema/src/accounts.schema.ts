import { z } from 'zod';
import { isoDateParam } from './iso-date';

/** The roles of a membership, each including the ones before it (docs/accounts.md, "Roles"). */
export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
export const roleSchema = z.enum(ROLES).describe('viewer < editor < admin < owner; each includes the ones below it.');

/** Whether `role` is at least `required`. */
export const roleAtLeast = (role: Role, required: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(required);

/** The bounds of a password (issue 45): 10 to 256 characters; the upper bound also bounds the hashing work. */
export const PASSWORD_LENGTH = { min: 10, max: 256 } as const;

// PostgreSQL text cannot hold NUL: refused here (400) instead of failing the insert (500).
const noNul = (s: string) => !s.includes('\u0000');
const NUL_MESSAGE = { message: 'must not contain NUL characters' };

/** An email address, compared and stored in lower case. */
export const emailSchema = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email({ message: 'must be an email address' }))
  .transform((s) => s.toLowerCase())
  .describe('Email address (case-insensitive).');
const newPassword = z.string().min(PASSWORD_LENGTH.min).max(PASSWORD_LENGTH.max).refine(noNul, NUL_MESSAGE).describe('10 to 256 characters.');
// A sign-in takes any length up to the bound: a password set under other rules still gets its answer.
const givenPassword = z.string().min(1).max(PASSWORD_LENGTH.max).describe('The password.');
const personName = z.string().trim().min(1).max(200).refine(noNul, NUL_MESSAGE).describe('Display name, 1 to 200 chars.');
const orgName = z.string().trim().min(1).max(200).refine(noNul, NUL_MESSAGE).describe('Organization name, 1 to 200 chars.');
const oneTimeToken = z.string().min(1).max(200).describe('The token of the link.');
const uuid = z.uuid({ message: 'must be a UUID' });

export const userSchema = z
  .object({ id: z.string().describe('User id (UUID).'), email: z.string(), name: z.string().nullable() })
  .describe('A user.');
export type User = z.output<typeof userSchema>;

const sessionTokenFields = {
  token: z.string().describe('The user token: send it as `Authorization: Bearer <token>`. Shown once.'),
  expires_at: z.string().describe('When the token ends if it is not used again (idle expiry, never past the absolute one), ISO 8601.'),
  user: userSchema,
};
/** A new session: the token, when it ends, and whose it is. */
export const sessionTokenResponseSchema = z.object(sessionTokenFields).describe('Signed in.');

export const setupInputSchema = z.object({ email: emailSchema, password: newPassword, name: personName.optional() }).describe('The first user.');
export const loginInputSchema = z.object({ email: emailSchema, password: givenPassword }).describe('Credentials.');
export const passwordChangeInputSchema = z.object({ current_password: givenPassword, new_password: newPassword }).describe('The current password and the new one.');
export const passwordResetInputSchema = z.object({ email: emailSchema }).describe('Whose password to reset.');
export const passwordResetConfirmInputSchema = z.object({ token: oneTimeToken, password: newPassword }).describe('The token of the reset link and the new password.');
export const invitationAcceptInputSchema = z
  .object({ token: oneTimeToken, password: newPassword.optional(), name: personName.optional() })
  .describe('The token of the invitation link; a password for a new account, or the current one of an existing account when not signed in as it.');
export const readKeyInputSchema = z.object({ project_id: uuid.describe('Project id (UUID).') }).describe('The project to read.');

/** Single sign-on (docs/accounts.md, "Single sign-on (OIDC)"): base64url, no padding. */
const base64url = /^[A-Za-z0-9_-]+$/;
export const oidcStartInputSchema = z
  .object({
    binding: z
      .string()
      .length(43)
      .regex(base64url, { message: 'must be base64url' })
      .describe("base64url (no padding) SHA-256 of a random secret the browser keeps (sessionStorage) until POST /auth/oidc/complete: only that browser can finish this sign-in."),
  })
  .describe('Starts a single sign-on.');
export const oidcStartResponseSchema = z
  .object({ url: z.string().describe("The provider's authorization URL (code flow with PKCE S256, state, nonce; scope `openid email profile`): open it in this tab.") })
  .describe('Where to send the browser.');
export const oidcCallbackParamsSchema = z
  .object({
    code: z.string().max(4096).optional().describe("The provider's authorization code."),
    state: z.string().max(512).optional().describe('The state of POST /auth/oidc/start.'),
    error: z.string().max(256).optional().describe("The provider's error (access_denied, ...)."),
  })
  .loose()
  .describe("The provider's authorization response (RFC 6749 4.1.2; `iss` and other parameters pass to the client's checks).");
export const oidcCompleteInputSchema = z
  .object({
    code: z.string().min(1).max(200).describe('The one-time code of the `#sso=` fragment (60 seconds).'),
    secret: z.string().min(32).max(256).describe('The secret whose SHA-256 was the binding of POST /auth/oidc/start.'),
  })
  .describe('Finishes a single sign-on in the browser that started it.');
export const authConfigResponseSchema = z
  .object({
    setup_required: z.boolean().describe('No user exists yet: show the first-run page (POST /auth/setup).'),
    sso: z.object({ name: z.string().describe('OIDC_NAME: the button reads "Sign in with <name>".') }).nullable().describe('Single sign-on, when configured.'),
    password_reset: z.boolean().describe('Mail is configured: offer "Forgot password".'),
  })
  .describe('What the sign-in and first-run pages offer.');

export const acceptedResponseSchema = z.object({ ok: z.literal(true) }).describe('Accepted.');

export const membershipSchema = z.object({ id: z.string().describe('Organization id (UUID).'), name: z.string(), role: roleSchema }).describe("An organization of the user and the user's role in it.");
export const meResponseSchema = z.object({ user: userSchema, organizations: z.array(membershipSchema) }).describe('The signed-in user and their organizations.');

export const sessionSchema = z
  .object({
    id: z.string().describe('Session id (the public part of its token).'),
    created_at: z.string(),
    last_used_at: z.string(),
    expires_at: z.string().describe('When it ends if not used again (idle expiry, never past the absolute one).'),
    user_agent: z.string().nullable().describe('The User-Agent it signed in with (cut to 256 chars).'),
    current: z.boolean().describe('The session of this request.'),
  })
  .describe('A live session of the user.');
export const sessionListResponseSchema = z.object({ sessions: z.array(sessionSchema) }).describe('The live sessions of the user, newest first.');

export const readKeyResponseSchema = z
  .object({
    key: z.string().describe('An rk_ key for GET /v1/* of the project: shown once, ends with the session or at expires_at.'),
    prefix: z.string(),
    kind: z.literal('rk'),
    project_id: z.string(),
    expires_at: z.string().describe('ISO 8601; at most one hour, never past the session.'),
  })
  .describe('A short-lived read key bound to the session.');

export const orgSchema = z.object({ id: z.string().describe('Organization id (UUID).'), name: z.string() }).describe('An organization.');
export const orgInputSchema = z.object({ name: orgName }).describe('An organization name.');
export const orgResponseSchema = z.object({ org: orgSchema }).describe('One organization.');
export const orgListResponseSchema = z
  .object({
    orgs: z.array(orgSchema.extend({ role: roleSchema.nullable().describe("The caller's role (null for ADMIN_TOKEN, which sees every organization)."), created_at: z.string() })),
  })
  .describe("The caller's organizations (all of them for ADMIN_TOKEN), oldest first.");

export const invitationInputSchema = z.object({ email: emailSchema, role: roleSchema }).describe('Whom to invite, with which role.');
export const invitationSchema = z
  .object({ id: z.string(), email: z.string(), role: roleSchema, expires_at: z.string().describe('ISO 8601: 7 days after it was made.') })
  .describe('A pending invitation.');
export const createdInvitationResponseSchema = z
  .object({
    invitation: invitationSchema,
    token: z.string().describe('The one-time token (shown once): POST /auth/invitations/accept takes it.'),
    accept_url: z.string().describe('The dashboard link that accepts it (PUBLIC_URL or this request\'s host; the token rides in the fragment).'),
  })
  .describe('The invitation, its token and its link.');
export const invitationListResponseSchema = z
  .object({ invitations: z.array(invitationSchema.extend({ created_at: z.string() })) })
  .describe('Pending invitations (not accepted, not expired), newest first.');

export const memberSchema = z
  .object({ user_id: z.string(), email: z.string(), name: z.string().nullable(), role: roleSchema, joined_at: z.string() })
  .describe('A member of the organization.');
export const memberListResponseSchema = z.object({ members: z.array(memberSchema) }).describe('Members, oldest first.');
export const memberInputSchema = z.object({ role: roleSchema }).describe('The new role.');
export const memberResponseSchema = z.object({ member: memberSchema }).describe('The member.');

/** Everything the audit log records (docs/accounts.md, "Audit"); MCP tool calls and single sign-on write through the same writer. */
export const AUDIT_ACTIONS = [
  'user.signed_in',
  'user.sign_in_failed',
  'user.signed_out',
  'user.password_changed',
  'user.password_reset',
  'session.ended',
  'org.created',
  'org.renamed',
  'invitation.created',
  'invitation.deleted',
  'invitation.accepted',
  'member.role_changed',
  'member.removed',
  'project.created',
  'project.updated',
  'project.deleted',
  'project.imported',
  'key.created',
  'key.revoked',
  'goal.created',
  'goal.updated',
  'goal.deleted',
  'funnel.created',
  'funnel.updated',
  'funnel.deleted',
  'segment.created',
  'segment.updated',
  'segment.deleted',
  'backup.created',
  'mcp.grant_created',
  'mcp.tool_called',
  'share.created',
  'share.revoked',
  'annotation.created',
  'annotation.deleted',
  'alert.created',
  'alert.updated',
  'alert.deleted',
  'report.created',
  'report.updated',
  'report.deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_ACTOR_TYPES = ['user', 'operator', 'agent', 'system'] as const;
export const auditActorSchema = z
  .object({
    type: z.enum(AUDIT_ACTOR_TYPES).describe('user: a signed-in person; operator: ADMIN_TOKEN; agent: an MCP client through an OAuth grant; system.'),
    id: z.string().nullable().describe('User id or OAuth client id.'),
    name: z.string().nullable().describe("The user's email or the agent's client name."),
  })
  .describe('Who acted.');
export type AuditActor = z.output<typeof auditActorSchema>;
export const auditTargetSchema = z
  .object({
    type: z.enum(['user', 'session', 'org', 'invitation', 'project', 'key', 'backup', 'share', 'goal', 'funnel', 'segment', 'annotation', 'alert', 'report']),
    id: z.string().nullable().describe('Its id (a key: its prefix; never a secret).'),
    name: z.string().nullable().describe('A readable name: an email, a project or organization name.'),
  })
  .describe('What was acted on.');
export type AuditTarget = z.output<typeof auditTargetSchema>;
export const auditEntrySchema = z
  .object({
    at: z.string().describe('ISO 8601.'),
    actor: auditActorSchema,
    action: z.enum(AUDIT_ACTIONS),
    target: auditTargetSchema,
    details: z.record(z.string(), z.unknown()).describe('What changed (a role from and to, a key kind, a tool name); never a secret, an address or result data.'),
  })
  .describe('One audit entry.');
export type AuditEntry = z.output<typeof auditEntrySchema>;
export const auditParamsSchema = z
  .object({
    from: isoDateParam().optional().describe('Entries at or after this time (ISO 8601).'),
    to: isoDateParam().optional().describe('Entries before this time (ISO 8601).'),
    limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Maximum entries (1 to 1000, default 100).'),
  })
  .describe('A window of the audit log.');
export const auditResponseSchema = z.object({ entries: z.array(auditEntrySchema) }).describe('Entries of the window, newest first; kept 400 days.');

export const keyInfoSchema = z
  .object({
    prefix: z.string(),
    kind: z.enum(['pk', 'sk', 'rk', 'ak']),
    env: z.enum(['live', 'test']),
    created_at: z.string(),
    last_used_at: z.string().nullable().describe('Last accepted request (recorded within a minute), or null.'),
    revoked_at: z.string().nullable(),
  })
  .describe('A key of the project, without its secret.');
export const keyListResponseSchema = z.object({ keys: z.array(keyInfoSchema) }).describe("The project's keys (the session-bound read keys of signed-in users left out), oldest first; never a secret.");

export const userListResponseSchema = z
  .object({ users: z.array(userSchema.extend({ created_at: z.string(), organizations: z.array(membershipSchema) })) })
  .describe('Every user with their organizations, oldest first.');
export const adminResetResponseSchema = z
  .object({ user: userSchema, reset_url: z.string().describe('A one-time link valid one hour; the token rides in the fragment.'), expires_at: z.string() })
  .describe('A password-reset link for the user.');

export type SetupInput = z.output<typeof setupInputSchema>;
export type InvitationInput = z.output<typeof invitationInputSchema>;
export type AuditParams = z.output<typeof auditParamsSchema>;
