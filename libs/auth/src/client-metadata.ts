import { MAX_REDIRECT_URI_LENGTH, redirectUriProblem } from './redirect-uri';

/** Size caps of a client's registration (RFC 7591 metadata): one registration cannot bloat the key store or the consent page. */
export const CLIENT_METADATA_LIMITS = {
  /** The whole metadata, as JSON. */
  bytes: 8 * 1024,
  clientName: 200,
  /** Every other string, and each string of a list (each redirect URI included). */
  string: MAX_REDIRECT_URI_LENGTH,
  redirectUris: 10,
  /** Items of any other list (contacts, grant_types, response_types). */
  listItems: 10,
} as const;

export interface ClientMetadataRefusal {
  /** RFC 7591 3.2.2 error codes. */
  error: 'invalid_client_metadata' | 'invalid_redirect_uri';
  description: string;
}

// Controls and bidirectional overrides let a name look like another on the consent page.
const DECEPTIVE_CHARACTERS = /[\p{Cc}\p{Bidi_Control}]/u;

const refuse = (error: ClientMetadataRefusal['error'], description: string): ClientMetadataRefusal => ({ error, description });

function sizeProblem(metadata: Record<string, unknown>): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > CLIENT_METADATA_LIMITS.bytes) return `the client metadata is ${bytes} bytes of JSON; at most ${CLIENT_METADATA_LIMITS.bytes}`;
  const name = metadata['client_name'];
  if (typeof name === 'string' && name.length > CLIENT_METADATA_LIMITS.clientName) return `client_name is ${name.length} characters; at most ${CLIENT_METADATA_LIMITS.clientName}`;
  if (typeof name === 'string' && DECEPTIVE_CHARACTERS.test(name)) return 'client_name contains control or text-direction characters';
  for (const [field, value] of Object.entries(metadata)) {
    const strings = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
    if (strings.some((s) => s.length > CLIENT_METADATA_LIMITS.string)) return `${field} holds a string longer than ${CLIENT_METADATA_LIMITS.string} characters`;
    const maxItems = field === 'redirect_uris' ? CLIENT_METADATA_LIMITS.redirectUris : CLIENT_METADATA_LIMITS.listItems;
    if (Array.isArray(value) && value.length > maxItems) return `${field} has ${value.length} entries; at most ${maxItems}`;
  }
  return undefined;
}

/**
 * Why a dynamic client registration is refused before it is stored, or undefined: over-size metadata is
 * invalid_client_metadata, a redirect URI outside `redirectUriProblem`'s rules is invalid_redirect_uri. Types are left
 * to the registration's own schema.
 */
export function clientMetadataProblem(metadata: unknown): ClientMetadataRefusal | undefined {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return refuse('invalid_client_metadata', 'the client metadata must be a JSON object');
  const record = metadata as Record<string, unknown>;
  const size = sizeProblem(record);
  if (size) return refuse('invalid_client_metadata', size);
  const uris = record['redirect_uris'];
  if (!Array.isArray(uris)) return undefined;
  if (uris.length === 0) return refuse('invalid_redirect_uri', 'redirect_uris must name at least one URI');
  for (const [i, uri] of uris.entries()) {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri) : undefined;
    if (problem) return refuse('invalid_redirect_uri', `redirect_uris[${i}] ${problem}`);
  }
  return undefined;
}
