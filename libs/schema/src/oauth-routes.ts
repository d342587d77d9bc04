import type { ApiApp } from './api-routes';

/**
 * One endpoint of the OAuth 2.1 authorization server of /mcp (apps/mcp-gateway/src/oauth.ts, `MCP_OAUTH=on`). These
 * are protocol endpoints, not routes of the JSON API: MCP clients find them through the metadata and call them as the
 * RFCs say (form-encoded or JSON bodies; answers in HTML, redirects or the RFCs' error JSON), so they have no zod
 * schemas, are not in the OpenAPI document and are not in `routes`. The gateway serves exactly these paths, and the
 * proxy (docker/nginx.conf, docker/k8s/ingress.yaml) routes each to its app (`npm run proxy:routes`).
 */
export interface OAuthRoute {
  /** Names it beside its location in the generated proxy files. */
  name: string;
  /** An exact path: no parameters. */
  path: string;
  /** What it serves; every one but /authorize also answers its CORS preflight (OPTIONS), which the proxy passes on with the path. */
  methods: readonly ('get' | 'post')[];
  app: Extract<ApiApp, 'mcp-gateway'>;
  summary: string;
}

/** The OAuth endpoints of /mcp, declared once: the gateway's router and the proxy's routes follow this list. */
export const OAUTH_ROUTES = [
  { name: 'oauthProtectedResource', path: '/.well-known/oauth-protected-resource', methods: ['get'], app: 'mcp-gateway', summary: 'Protected resource metadata of /mcp (RFC 9728), at the root where most clients ask for it' },
  { name: 'oauthProtectedResourceMcp', path: '/.well-known/oauth-protected-resource/mcp', methods: ['get'], app: 'mcp-gateway', summary: 'The same metadata at the path RFC 9728 derives from the resource /mcp' },
  { name: 'oauthAuthorizationServer', path: '/.well-known/oauth-authorization-server', methods: ['get'], app: 'mcp-gateway', summary: 'Authorization server metadata (RFC 8414): the endpoints, PKCE S256 only, the scopes' },
  { name: 'oauthAuthorize', path: '/authorize', methods: ['get', 'post'], app: 'mcp-gateway', summary: 'The consent page (HTML) and its forms: a pasted key, or a sign-in and a project picked; then the redirect with a code' },
  { name: 'oauthToken', path: '/token', methods: ['post'], app: 'mcp-gateway', summary: 'An authorization code (with its PKCE verifier) or a refresh token for an access and a refresh token' },
  { name: 'oauthRegister', path: '/register', methods: ['post'], app: 'mcp-gateway', summary: 'Dynamic client registration (RFC 7591), capped per client address and in total' },
  { name: 'oauthRevoke', path: '/revoke', methods: ['post'], app: 'mcp-gateway', summary: 'Revoke an access or refresh token (RFC 7009; a refresh token revokes its whole grant)' },
] as const satisfies readonly OAuthRoute[];

export type OAuthRouteName = (typeof OAUTH_ROUTES)[number]['name'];

/** The declared path of one OAuth endpoint. */
export const oauthPath = (name: OAuthRouteName): string => OAUTH_ROUTES.find((r) => r.name === name)!.path;
