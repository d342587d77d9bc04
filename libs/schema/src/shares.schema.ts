import { z } from 'zod';
import { PASSWORD_LENGTH } from './accounts.schema';

// Share links (issue 46, docs/saved-and-shared.md "Share links and embeds"): a project's dashboard, read-only, for
// whoever holds the link; with a password, an unlock step first.

/**
 * A share credential: `shr_{id}_{secret}` (base62). The link's token names the share's public id; the credential an
 * unlock gives names its own id. Either is an `Authorization: Bearer` credential accepted only by the read routes
 * declared with `share: true`; every other route refuses it with 403 insufficient_scope.
 */
export const SHARE_TOKEN = /^shr_([0-9A-Za-z]{1,64})_([0-9A-Za-z]{1,128})$/;

/** Whether a bearer token is a share credential by its form (no lookup): other routes refuse it with 403 insufficient_scope. */
export const isShareToken = (token: string | undefined): boolean => token !== undefined && token.startsWith('shr_');

/** How long the credential a password link's unlock gives lives at most (never past the link's expiry). */
export const SHARE_UNLOCK_TTL_MS = 3_600_000;
/** Live links a project may hold at once. */
export const SHARES_PER_PROJECT = 200;

// PostgreSQL text cannot hold NUL: refused here (400) instead of failing the insert (500).
const noNul = (s: string) => !s.includes('\u0000');
const NUL_MESSAGE = { message: 'must not contain NUL characters' };

export const shareInputSchema = z
  .object({
    name: z.string().trim().min(1).max(200).refine(noNul, NUL_MESSAGE).optional().describe('What the link is for (shown in the list), 1 to 200 chars.'),
    password: z
      .string()
      .min(PASSWORD_LENGTH.min)
      .max(PASSWORD_LENGTH.max)
      .refine(noNul, NUL_MESSAGE)
      .optional()
      .describe('10 to 256 characters: the link asks for it before it shows anything (stored as a scrypt hash).'),
    expires_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).optional().describe('When the link stops working, ISO 8601, in the future (unset: never).'),
    segment: z.string().min(1).max(200).optional().describe("A saved segment's id: its filters are applied to every read of the link, and cannot be removed (a snapshot: a later edit of the segment leaves the link as it is)."),
    embed_origins: z
      .array(z.string().max(2048).refine(noNul, NUL_MESSAGE))
      .max(50)
      .optional()
      .describe('Origins (scheme://host[:port], or https://*.example.com) whose pages may show the link in an <iframe> with ?embed=1 (Content-Security-Policy frame-ancestors); none: no page may.'),
  })
  .describe('A new share link of the project.');
export type ShareInput = z.output<typeof shareInputSchema>;

export const shareSegmentSchema = z
  .object({ id: z.string(), name: z.string(), filters: z.array(z.unknown()).describe('The segment\'s filters as saved, /v1/insights `filters` form.') })
  .describe('The segment applied to every read of the link, as it was when the link was made.');

export const shareSchema = z
  .object({
    id: z.string().describe('The share id (public).'),
    name: z.string().nullable(),
    expires_at: z.string().nullable().describe('ISO 8601; null: never.'),
    has_password: z.boolean(),
    segment: shareSegmentSchema.nullable(),
    embed_origins: z.array(z.string()),
    created_at: z.string(),
  })
  .describe('A share link (never its token).');
export type Share = z.output<typeof shareSchema>;

export const createdShareResponseSchema = z
  .object({ share: shareSchema, url: z.string().describe('`<base>/share/<token>`: the link, shown once (only its hash is kept).') })
  .describe('The new link.');
export const shareListResponseSchema = z.object({ shares: z.array(shareSchema) }).describe("The project's live links (not revoked, not expired), newest first.");

export const shareUnlockInputSchema = z
  .object({
    token: z.string().min(1).max(200).describe('The token of the link (the last part of its URL).'),
    password: z.string().min(1).max(PASSWORD_LENGTH.max).optional().describe("The link's password, when it has one."),
  })
  .describe('Open a share link.');

export const shareUnlockResponseSchema = z
  .object({
    token: z.string().describe('The credential to read with (`Authorization: Bearer`): the link\'s own token without a password; with one, a credential valid one hour at most.'),
    expires_at: z.string().nullable().describe('When the credential ends, ISO 8601 (null: with the link).'),
    project: z.object({ id: z.string(), name: z.string() }),
    share: shareSchema.omit({ created_at: true }),
  })
  .describe('What the shared dashboard needs: the credential, the project\'s name and the link.');

/**
 * The CSP `frame-ancestors` of a share link's page: the link's embed origins for `?embed=1` on a live link that lists
 * some, else `'none'` (as the dashboard's own page). The origins were normalised when the link was made (no space, no `;`).
 */
export const frameAncestorsOf = (embedOrigins: readonly string[] | undefined): string => (embedOrigins && embedOrigins.length > 0 ? embedOrigins.join(' ') : "'none'");

export const shareFrameQuerySchema = z
  .object({
    token: z.string().min(1).max(200).describe("The link's token (the last part of its page's address)."),
    embed: z.string().max(8).optional().describe('`1` when the page was asked with ?embed=1; otherwise the answer is `\'none\'` without a lookup.'),
  })
  .describe("Whose page's framing to answer.");
export const shareFrameResponseSchema = z
  .object({ frame_ancestors: z.string().describe("The CSP frame-ancestors value (also the X-Frame-Ancestors header): the link's embed origins, or 'none'.") })
  .describe("Who may frame a share link's page.");
