// A key anywhere in a segment, also percent-encoded (`sk%5Flive%5F…`): kind, env, prefix kept, the secret dropped.
const KEY_IN_TEXT = /\b(pk|sk|rk|ak)_(live|test)_([0-9A-Za-z]{1,64})_[0-9A-Za-z]+/gi;
// An MCP OAuth access or refresh token (`mcp_at_…`, `mcp_rt_…`): only its kind is kept.
const OAUTH_TOKEN_IN_TEXT = /\bmcp_(at|rt)_[0-9A-Za-z]+/gi;
// A share link's token (`/share/shr_{id}_{secret}`, a bearer credential in the page's address): its id kept, the secret dropped.
const SHARE_TOKEN_IN_TEXT = /\bshr_([0-9A-Za-z]{1,64})_[0-9A-Za-z]+/g;

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A request path fit for a log line: no query string, and every key- or token-shaped part without its secret. */
export function redactPath(path: string): string {
  const bare = path.split('?')[0]!;
  return bare
    .split('/')
    .map((segment) => {
      const decoded = decode(segment);
      const redacted = decoded.replace(KEY_IN_TEXT, '$1_$2_$3_[redacted]').replace(OAUTH_TOKEN_IN_TEXT, 'mcp_$1_[redacted]').replace(SHARE_TOKEN_IN_TEXT, 'shr_$1_[redacted]');
      return redacted === decoded ? segment : redacted;
    })
    .join('/');
}
