import type { AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { ConsentOrg } from '@analytics/accounts';
import { ApiError, type User } from '@analytics/schema';

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
.or{margin:16px 0 0}
form{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin-top:16px}
label{width:100%;font-weight:600}
input[name=api_key],input[type=email],input[type=password]{flex:1;min-width:0;padding:8px;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--text);font:inherit}
form.stack input[type=email],form.stack input[type=password]{flex:1 1 100%}
.choice input{margin:0}
h2{font-size:1.05rem;margin:20px 0 4px}
fieldset{width:100%;border:1px solid var(--border);border-radius:6px;margin:0;padding:8px 12px}
legend{font-weight:600;padding:0 4px}
.choice{display:flex;gap:8px;align-items:center;padding:4px 0}
.choice label{width:auto;font-weight:400}
button{padding:8px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--card);font:inherit;cursor:pointer}
`;

/** The sign-in part of the page: shown when people accounts are wired (npm start, or the gateway with ADMIN_TOKEN). */
export interface SignInView {
  /** Why the last sign-in was refused, in words. */
  error?: string;
  /** The email typed, kept after a refusal. */
  email?: string;
  /** OIDC_NAME when single sign-on is configured: a "Sign in with <name>" button before the password form. */
  sso?: string;
}

/** What a signed-in person may pick: the ticket carries the sign-in to the pick (one-time, 10 minutes). */
export interface PickerView {
  ticket: string;
  user: User;
  orgs: ConsentOrg[];
  error?: string;
}

/**
 * The OAuth parameters of the request, as the page's forms carry them back to /authorize (and as a single sign-on
 * started on the page keeps them, to come back to the page with).
 */
export function oauthParamsOf(client: OAuthClientInformationFull, params: AuthorizationParams): { client_id: string; redirect_uri: string; code_challenge: string } & Record<string, string> {
  const optional: Record<string, string | undefined> = {
    state: params.state,
    scope: params.scopes?.length ? params.scopes.join(' ') : undefined,
    resource: params.resource?.href,
  };
  return {
    client_id: client.client_id,
    redirect_uri: params.redirectUri,
    response_type: 'code',
    code_challenge: params.codeChallenge,
    code_challenge_method: 'S256',
    ...Object.fromEntries(Object.entries(optional).filter((e): e is [string, string] => e[1] !== undefined)),
  };
}

/** The OAuth parameters of the request, as hidden fields: every form posts back to /authorize with them. */
function hiddenInputs(client: OAuthClientInformationFull, params: AuthorizationParams, extra: Record<string, string> = {}): string {
  return Object.entries({ ...oauthParamsOf(client, params), ...extra })
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
}

/** The page around its forms: the client's name marked unverified, and where the code goes. */
function consentDocument(client: OAuthClientInformationFull, params: AuthorizationParams, body: string): string {
  const name = escapeHtml(client.client_name ?? client.client_id);
  const target = escapeHtml(redirectTargetOf(params.redirectUri));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Connect ${name} (unverified) to your analytics</title>
<style>${CONSENT_CSS}</style></head>
<body><main class="card"><h1>Connect ${name} <span class="unverified">unverified</span></h1>
<p><strong>${name}</strong> is the name this client gave itself when it registered: it is <strong>unverified</strong>. Continue only if you started this connection yourself, from that app.</p>
<p>The access is sent to <strong class="target">${target}</strong>.</p>
${body}
</main></body></html>`;
}

const alert = (error: string | undefined) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '');

/**
 * The consent page: a form that posts the key back to /authorize with the OAuth parameters it came with and, when
 * `signIn` is given, a sign-in form before it (email and password, then the project picker), and with single sign-on
 * a "Sign in with <name>" button (a form: the page runs no script), which posts to /authorize too. Every client registered
 * itself through /register (RFC 7591, no software statement checked), so its name is shown as unverified and the
 * redirect host beside it: that host, not the name, is who receives the code.
 */
export function authorizePage(client: OAuthClientInformationFull, params: AuthorizationParams, keyError?: string, signIn?: SignInView): string {
  const inputs = hiddenInputs(client, params);
  const keyForm = `${alert(keyError)}
<form method="post" action="/authorize">
${inputs}
<label for="api_key">API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" required>
<button type="submit">Connect</button>
</form>`;
  if (!signIn) {
    return consentDocument(
      client,
      params,
      `<p>Paste an <code>rk_</code> key to let it read your project's statistics, or an <code>sk_</code> key to let it record events. It gets exactly what the key allows, until the key is revoked.</p>
${keyForm}`,
    );
  }
  return consentDocument(
    client,
    params,
    `<h2>Sign in</h2>
<p>Sign in, then pick one of your projects: it may read that project's statistics until you leave its organization or the project is deleted.</p>
${alert(signIn.error)}${
      signIn.sso === undefined
        ? ''
        : `
<form method="post" action="/authorize">
${inputs}
<input type="hidden" name="sso_start" value="1">
<button type="submit">Sign in with ${escapeHtml(signIn.sso)}</button>
</form>
<p class="or">Or with your email and password:</p>`
    }
<form class="stack" method="post" action="/authorize">
${inputs}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" value="${escapeHtml(signIn.email ?? '')}" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<h2>Or paste an API key</h2>
<p>An <code>rk_</code> key lets it read the key's project, an <code>sk_</code> key lets it record events. It gets exactly what the key allows, until the key is revoked.</p>
${keyForm}`,
  );
}

/**
 * After the sign-in: every project the person may see, grouped by organization, one to pick. The form carries the
 * one-time ticket, never a session token or a key.
 */
export function pickerPage(client: OAuthClientInformationFull, params: AuthorizationParams, picker: PickerView): string {
  const name = escapeHtml(client.client_name ?? client.client_id);
  const who = `<p>Signed in as <strong>${escapeHtml(picker.user.email)}</strong>.</p>`;
  if (picker.orgs.length === 0) {
    return consentDocument(client, params, `${who}
<p class="error" role="alert">None of your organizations has a project yet: create one in the dashboard, or ask to be invited to an organization that has one, then connect again.</p>`);
  }
  let n = 0;
  const groups = picker.orgs
    .map((org) => {
      const choices = org.projects
        .map((p) => {
          const id = `project_${n++}`;
          return `<div class="choice"><input type="radio" id="${id}" name="project_id" value="${escapeHtml(p.id)}" required><label for="${id}">${escapeHtml(p.name)}</label></div>`;
        })
        .join('\n');
      return `<fieldset><legend>${escapeHtml(org.name)} (${escapeHtml(org.role)})</legend>
${choices}
</fieldset>`;
    })
    .join('\n');
  return consentDocument(
    client,
    params,
    `${who}
<h2>Pick a project</h2>
<p><strong>${name}</strong> will <strong>read this project's statistics</strong> (the reads a viewer has: no events recorded, no settings changed), until you leave its organization, the project is deleted or its key is revoked. Each tool it calls is written to the organization's audit log.</p>
${alert(picker.error)}
<form class="stack" method="post" action="/authorize">
${hiddenInputs(client, params, { ticket: picker.ticket })}
${groups}
<button type="submit">Allow read access</button>
</form>`,
  );
}
