import type { AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { ApiError } from '@analytics/schema';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Where the code goes, as the owner can judge it: the host (with port) of a web redirect, or the app's own scheme. */
export function redirectTargetOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.host : `the app that opens ${url.protocol} links on this device`;
}

/** Why a pasted key was refused, in words for the site owner. */
export function refusal(e: unknown): string {
  const code = e instanceof ApiError ? e.code : 'invalid_api_key';
  if (code === 'missing_bearer_token') return 'Paste a key.';
  if (code === 'malformed_api_key') return 'That is not an API key: keys look like rk_live_<prefix>_<secret> or sk_live_<prefix>_<secret>.';
  return 'That key is unknown or revoked: check it in your project (npm run admin -- projects) or create a new one.';
}

/** The dashboard's palette and type (apps/dashboard/src/styles.css), inline: the page's CSP allows no stylesheet fetch. */
const CONSENT_CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--text:#14171f;--border:#dde1e7;--accent:#4338ca;--down:#b91c1c;--warn:#92400e;--focus:#2563eb}
@media (prefers-color-scheme:dark){:root{--bg:#0f1117;--card:#181b24;--text:#e8eaf0;--border:#2b303c;--accent:#a5b4fc;--down:#f87171;--warn:#fbbf24;--focus:#93c5fd}}
*{box-sizing:border-box}
body{margin:0;padding:0 16px;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:var(--bg);color:var(--text)}
.card{max-width:520px;margin:48px auto;background:var(--card);border:1px solid var(--border);border-radius:8px;padding:20px 24px}
h1{font-size:1.25rem;margin:0 0 12px}
p{margin:0 0 12px}
code{font-size:.9em}
:focus-visible{outline:2px solid var(--focus);outline-offset:2px}
.unverified{font-size:.7rem;font-weight:600;vertical-align:middle;padding:2px 6px;border:1px solid var(--warn);border-radius:6px;color:var(--warn);text-transform:uppercase;letter-spacing:.04em}
.target{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
.error{color:var(--down);font-weight:600}
form{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin-top:16px}
label{width:100%;font-weight:600}
input[name=api_key]{flex:1;min-width:0;padding:8px;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--text);font:inherit}
button{padding:8px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--card);font:inherit;cursor:pointer}
`;

/**
 * The consent page: one form that posts the key back to /authorize with the OAuth parameters it came with. Every client
 * registered itself through /register (RFC 7591, no software statement checked), so its name is shown as unverified
 * and the redirect host beside it: that host, not the name, is who receives the code.
 */
export function authorizePage(client: OAuthClientInformationFull, params: AuthorizationParams, error?: string): string {
  const hidden: Record<string, string | undefined> = {
    client_id: client.client_id,
    redirect_uri: params.redirectUri,
    response_type: 'code',
    code_challenge: params.codeChallenge,
    code_challenge_method: 'S256',
    state: params.state,
    scope: params.scopes?.length ? params.scopes.join(' ') : undefined,
    resource: params.resource?.href,
  };
  const inputs = Object.entries(hidden)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
  const name = escapeHtml(client.client_name ?? client.client_id);
  const target = escapeHtml(redirectTargetOf(params.redirectUri));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Connect ${name} (unverified) to your analytics</title>
<style>${CONSENT_CSS}</style></head>
<body><main class="card"><h1>Connect ${name} <span class="unverified">unverified</span></h1>
<p><strong>${name}</strong> is the name this client gave itself when it registered: it is <strong>unverified</strong>. Continue only if you started this connection yourself, from that app.</p>
<p>The access is sent to <strong class="target">${target}</strong>.</p>
<p>Paste an <code>rk_</code> key to let it read your project's statistics, or an <code>sk_</code> key to let it record events. It gets exactly what the key allows, until the key is revoked.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/authorize">
${inputs}
<label for="api_key">API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" required>
<button type="submit">Connect</button>
</form></main></body></html>`;
}
