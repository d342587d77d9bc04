import { z } from 'zod';
import { ApiError, type ErrorCode } from './errors';

/**
 * How much a validation failure may answer, whatever was sent: the first 50 issues, 16 KB of `details` JSON at most,
 * each message and path cut to 300 characters (a message may quote what was sent, e.g. unknown keys). docs/api/errors.md.
 */
export const DETAILS_LIMITS = { issues: 50, bytes: 16 * 1024, text: 300 } as const;

/** `details` of a 400 invalid_payload / invalid_params: the spec's flattened tree, each issue's path, and whether issues were cut. */
export interface ValidationDetails {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
  issues: Array<{ path: string; message: string }>;
  /** Present when issues were left out to stay within DETAILS_LIMITS. */
  truncated?: true;
}

export type Issue = { path: readonly PropertyKey[]; message: string };

const cut = (s: string) => (s.length > DETAILS_LIMITS.text ? `${s.slice(0, DETAILS_LIMITS.text)}…` : s);
const jsonBytes = (s: string) => Buffer.byteLength(JSON.stringify(s));
// The envelope `{"formErrors":[],"fieldErrors":{},"issues":[],"truncated":true}` with room; an issue's own punctuation.
const ENVELOPE_BYTES = 96;
const ISSUE_BYTES = 32;

/** `details` of these issues within DETAILS_LIMITS: those that fit, in order, and `truncated` when any did not. */
export function detailsOf(issues: readonly Issue[]): ValidationDetails {
  const formErrors: string[] = [];
  // A Map, not an object: a field named __proto__ is a key like any other.
  const fields = new Map<string, string[]>();
  const kept: ValidationDetails['issues'] = [];
  let bytes = ENVELOPE_BYTES;
  let truncated = false;
  for (const issue of issues) {
    const message = cut(issue.message);
    const path = cut(issue.path.map(String).join('.'));
    const field = issue.path.length > 0 ? cut(String(issue.path[0])) : undefined;
    // Each message is written twice (in the tree and in `issues`).
    const cost = 2 * jsonBytes(message) + jsonBytes(path) + (field === undefined ? 0 : jsonBytes(field)) + ISSUE_BYTES;
    if (kept.length === DETAILS_LIMITS.issues || bytes + cost > DETAILS_LIMITS.bytes) {
      truncated = true;
      break;
    }
    bytes += cost;
    kept.push({ path, message });
    if (field === undefined) formErrors.push(message);
    else fields.set(field, [...(fields.get(field) ?? []), message]);
  }
  return { formErrors, fieldErrors: Object.fromEntries(fields), issues: kept, ...(truncated ? { truncated: true as const } : {}) };
}

/** The flattened validation tree the spec puts in `details`, plus each issue's path for nested fields, within DETAILS_LIMITS. */
export function validationDetails(error: z.ZodError): ValidationDetails {
  return detailsOf(error.issues);
}

/** Parses `input` or throws `ApiError(code)` with the validation details. */
export function parseOrThrow<S extends z.ZodTypeAny>(schema: S, input: unknown, code: ErrorCode = 'invalid_payload'): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ApiError(code, { details: validationDetails(result.error) });
  return result.data;
}
