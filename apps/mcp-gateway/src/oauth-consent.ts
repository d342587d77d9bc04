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
  if (code === 'malformed_api_key') return 'That is not an API key: keys look like rk_live_… or sk_live_….';
  return 'That key is unknown or revoked: check it in your project (npm run admin -- projects) or create a new one.';
}

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
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}input[name=api_key]{width:100%;padding:.5rem;font:inherit}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}.error{color:#b00020}.unverified{font-size:.6em;vertical-align:middle;padding:.1em .4em;border:1px solid #b06000;border-radius:.3em;color:#b06000}.target{font-family:ui-monospace,monospace;word-break:break-all}</style></head>
<body><h1>Connect ${name} <span class="unverified">unverified</span></h1>
<p><strong>${name}</strong> is the name this client gave itself when it registered: it is <strong>unverified</strong>. Continue only if you started this connection yourself, from that app.</p>
<p>The access is sent to <strong class="target">${target}</strong>.</p>
<p>Paste an <code>rk_</code> key to let it read your project's statistics, or an <code>sk_</code> key to let it record events. It gets exactly what the key allows, until the key is revoked.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/authorize">
${inputs}
<label for="api_key">API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" required>
<button type="submit">Connect</button>
</form></body></html>`;
}
