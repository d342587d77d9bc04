import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A person the test provider signs in: the claims of `openid email profile`. */
export interface TestOidcAccount {
  email: string;
  email_verified: boolean;
  name: string;
}

interface OidcProviderLike {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ prompt: { name: string } }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: unknown, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
}
interface GrantLike {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}
interface ProviderContext {
  oidc: { client: { clientId: string }; session: { accountId: string }; provider: { Grant: new (init: { clientId: string; accountId: string }) => GrantLike } };
}

/** The path and query of an absolute URL: what to ask a server under test for when the URL names PUBLIC_URL. */
export const pathOf = (url: string): string => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/**
 * A real OpenID provider run in this process for tests of single sign-on: oidc-provider (the certified Node
 * implementation) on 127.0.0.1, with one confidential client (`client_secret_post`, PKCE required) whose redirect URI
 * is `<publicUrl>/auth/oidc/callback`. Its login interaction is answered by a minimal handler (whoever `authorize`
 * names signs in), its consent by a grant of `openid email profile` made when first looked for. Driven with plain HTTP.
 */
export class TestOidcProvider {
  readonly accounts = new Map<string, TestOidcAccount>();
  /** Who signs in at the next login prompt. */
  next = '';
  issuer = '';
  private server?: Server;

  constructor(
    readonly publicUrl: string,
    readonly client = { client_id: 'analytics', client_secret: 'client-secret-0123456789-abcdefghij' },
  ) {}

  async start(): Promise<void> {
    // "Unsupported runtime" on Node 20, and the development keys: not this test's concern.
    const warn = console.warn;
    console.warn = () => {};
    try {
      // ESM only: a real dynamic import (jest.preset.cjs keeps import() native). Untyped (no declarations ship with
      // it): imported by a name the compiler does not resolve, typed above.
      const specifier = 'oidc-provider';
      const { default: Provider } = (await import(specifier)) as { default: new (issuer: string, config: unknown) => OidcProviderLike };
      this.server = createServer();
      await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
      this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
      const provider = new Provider(this.issuer, {
        clients: [{ ...this.client, redirect_uris: [`${this.publicUrl}/auth/oidc/callback`], token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], response_types: ['code'] }],
        pkce: { required: () => true },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        features: { devInteractions: { enabled: false } },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
        findAccount: (_ctx: unknown, id: string) => {
          const account = this.accounts.get(id);
          return account ? { accountId: id, claims: async () => ({ sub: id, ...account }) } : undefined;
        },
        // No consent screen: the client's grant of `openid email profile` is made when first looked for.
        loadExistingGrant: async (ctx: ProviderContext) => {
          const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
          grant.addOIDCScope('openid email profile');
          await grant.save();
          return grant;
        },
      });
      const handle = provider.callback();
      this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
        if (!req.url?.startsWith('/interaction/')) return handle(req, res);
        void (async () => {
          const details = await provider.interactionDetails(req, res);
          if (details.prompt.name !== 'login') throw new Error(`unexpected prompt ${details.prompt.name}`);
          await provider.interactionFinished(req, res, { login: { accountId: this.next } }, { mergeWithLastSubmission: false });
        })().catch((e: unknown) => {
          res.statusCode = 500;
          res.end(String(e));
        });
      });
    } finally {
      console.warn = warn;
    }
  }

  /** OidcSettings (libs/accounts) for this provider and its client, the rest as given. */
  settings<T extends object>(rest: T): T & { issuer: string; clientId: string; clientSecret: string; publicUrl: string } {
    return { ...rest, issuer: this.issuer, clientId: this.client.client_id, clientSecret: this.client.client_secret, publicUrl: this.publicUrl };
  }

  /** Follows the provider's redirects (keeping its cookies) from the authorization URL to the redirect back to us. */
  async authorize(url: string, accountId: string): Promise<string> {
    this.next = accountId;
    const jar = new Map<string, string>();
    let at = new URL(url);
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(at, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair!.indexOf('=');
        jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`the provider answered ${res.status} at ${at.pathname}: ${await res.text()}`);
      if (location.startsWith(this.publicUrl)) return location;
      at = new URL(location, at);
    }
    throw new Error('too many redirects at the provider');
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
