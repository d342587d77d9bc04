// The pages of people (issue 45, docs/dashboard.md "Signing in"): sign-in, first run, invitation and reset links,
// the project switcher, project settings, members, the account and the audit log. Pages are reached by the URL's
// hash (#/settings, #/members, #/account, #/audit; the dashboard is #/ or no hash) so reload and back work; the
// dashboard's own view stays in the query string (state.ts).
import type { Role } from '@analytics/schema';
import { $, el } from './dom';
import {
  type AuthConfig,
  type Membership,
  type Project,
  type SignedIn,
  type User,
  AccountRefusal,
  ROLE_ORDER,
  atLeast,
  bindingOf,
  call,
  forgetSession,
  getToken,
  randomSecret,
  readKeyFor,
  setToken,
} from './session';

const PROJECT_ITEM = 'analytics.project';
const SSO_SECRET_ITEM = 'analytics.ssoSecret';

/** Every top-level page; showOnly shows some and hides the rest. */
const PAGES = ['login-page', 'setup-page', 'accept-page', 'reset-page', 'sign-in', 'dashboard', 'settings-page', 'members-page', 'account-page', 'audit-page'] as const;
type PageId = (typeof PAGES)[number];

export interface DashboardHooks {
  /** Shows the dashboard of the current key (pasted, or the session's read key via readKey). */
  showDashboard(): void;
  /** Stops the dashboard's timers (another page, or signed out). */
  leaveDashboard(): void;
}

let hooks: DashboardHooks;
let me: { user: User; organizations: Membership[] } | undefined;
let projects: Project[] = [];
/** The one-time token of the link that opened this tab (#invitation= / #reset=), kept out of the address bar. */
let linkToken: { kind: 'invitation' | 'reset'; token: string } | undefined;

export const signedIn = () => getToken() !== null;

export function showOnly(...ids: PageId[]): void {
  for (const id of PAGES) $(id).hidden = !ids.includes(id);
  const people = signedIn() && me !== undefined;
  $('people-nav').hidden = !people;
  $('project-title').hidden = !people || !currentProject();
  if (!ids.includes('dashboard')) {
    // The dashboard's "loaded" state is of the dashboard shown: none while another page is.
    delete document.body.dataset['state'];
    hooks.leaveDashboard();
    $('export-csv').hidden = true;
  }
  $('sign-out').hidden = !people && !ids.includes('dashboard');
  $('people-message').hidden = true;
}

const dateTime = (iso: string | null) => (iso ? new Date(iso).toISOString().slice(0, 16).replace('T', ' ') : '–');

function say(id: string, text: string): void {
  $(id).textContent = text;
}

/** A refusal in words in `errorId`; an ended session goes back to sign-in. */
function refused(e: unknown, errorId: string): void {
  if (e instanceof AccountRefusal && e.status === 401 && e.code === 'invalid_session') {
    forgetSession();
    me = undefined;
    void showSignedOut(e.message);
    return;
  }
  say(errorId, e instanceof Error ? e.message : String(e));
}

/** A button that acts on its second click (within 5 s): its text says what the second click does. */
export function confirmButton(label: string, aria: string, confirmText: string, act: () => Promise<void>): HTMLButtonElement {
  const b = el('button', { type: 'button', className: 'secondary small', textContent: label });
  b.setAttribute('aria-label', aria);
  let armed: number | undefined;
  b.onclick = () => {
    if (armed === undefined) {
      b.textContent = confirmText;
      b.setAttribute('aria-label', `${confirmText}: ${aria}`);
      armed = window.setTimeout(() => {
        armed = undefined;
        b.textContent = label;
        b.setAttribute('aria-label', aria);
      }, 5000);
      return;
    }
    clearTimeout(armed);
    armed = undefined;
    b.disabled = true;
    void act().finally(() => (b.disabled = false));
  };
  return b;
}

// ---- signed out: sign-in, first run, and the read-key card ----

async function authConfig(): Promise<AuthConfig> {
  try {
    return await call<AuthConfig>('GET', '/auth/config', undefined, null);
  } catch {
    return { setup_required: false, sso: null, password_reset: false };
  }
}

/**
 * The signed-out page: sign-in (or first run while no user exists) and the read-key card. `message` goes to the
 * sign-in form's alert, `keyMessage` to the key card's (and focus to the key field).
 */
export async function showSignedOut(message = '', keyMessage = ''): Promise<void> {
  me = undefined;
  const config = await authConfig();
  const first = config.setup_required;
  showOnly(first ? 'setup-page' : 'login-page', 'sign-in');
  $('sso-button').hidden = !config.sso;
  $('sso-button').textContent = config.sso ? `Sign in with ${config.sso.name}` : '';
  $('forgot-button').hidden = !config.password_reset;
  say(first ? 'setup-error' : 'login-error', message);
  say('key-error', keyMessage);
  $<HTMLInputElement>(keyMessage ? 'key-input' : first ? 'setup-token' : 'login-email').focus();
}

function signedInAs(answer: SignedIn): void {
  setToken(answer.token);
  me = undefined;
  sessionStorage.removeItem('analytics.readKey');
}

/** Leaves a link's page for the dashboard: the fragment (and its one-time token) out of the address. */
function toDashboard(): void {
  history.replaceState(null, '', location.pathname + location.search);
  void route();
}

function setUpSignedOutForms(): void {
  $('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    say('login-error', '');
    const email = $<HTMLInputElement>('login-email').value;
    const password = $<HTMLInputElement>('login-password').value;
    call<SignedIn>('POST', '/auth/login', { email, password }, null)
      .then((answer) => {
        $<HTMLInputElement>('login-password').value = '';
        signedInAs(answer);
        void route();
      })
      .catch((err: unknown) => say('login-error', err instanceof Error ? err.message : String(err)));
  });
  $('setup-form').addEventListener('submit', (e) => {
    e.preventDefault();
    say('setup-error', '');
    const admin = $<HTMLInputElement>('setup-token').value.trim();
    const name = $<HTMLInputElement>('setup-name').value.trim();
    const body = { email: $<HTMLInputElement>('setup-email').value, password: $<HTMLInputElement>('setup-password').value, ...(name ? { name } : {}) };
    call<SignedIn>('POST', '/auth/setup', body, admin)
      .then((answer) => {
        for (const id of ['setup-token', 'setup-password']) $<HTMLInputElement>(id).value = '';
        signedInAs(answer);
        void route();
      })
      .catch((err: unknown) => {
        if (err instanceof AccountRefusal && err.code === 'already_set_up') return void showSignedOut(err.message);
        const words = err instanceof AccountRefusal && err.code === 'invalid_session' ? `This is not the admin token. (${err.status} ${err.code})` : err instanceof Error ? err.message : String(err);
        say('setup-error', words);
      });
  });
  $('forgot-button').addEventListener('click', () => {
    const form = $('forgot-form');
    form.hidden = !form.hidden;
    $('forgot-button').setAttribute('aria-expanded', String(!form.hidden));
    if (!form.hidden) $<HTMLInputElement>('forgot-email').focus();
  });
  $('forgot-form').addEventListener('submit', (e) => {
    e.preventDefault();
    call('POST', '/auth/password-reset', { email: $<HTMLInputElement>('forgot-email').value }, null)
      .then(() => say('forgot-status', 'If an account has this email, a link to choose a new password is on its way (valid one hour).'))
      .catch((err: unknown) => say('forgot-status', err instanceof Error ? err.message : String(err)));
  });
  $('sso-button').addEventListener('click', () => {
    const secret = randomSecret();
    sessionStorage.setItem(SSO_SECRET_ITEM, secret);
    bindingOf(secret)
      .then((binding) => call<{ url: string }>('POST', '/auth/oidc/start', { binding }, null))
      .then((answer) => location.assign(answer.url))
      .catch((err: unknown) => say('login-error', err instanceof Error ? err.message : String(err)));
  });
  $('accept-form').addEventListener('submit', (e) => {
    e.preventDefault();
    say('accept-error', '');
    if (linkToken?.kind !== 'invitation') return;
    const name = $<HTMLInputElement>('accept-name').value.trim();
    const password = $<HTMLInputElement>('accept-password').value;
    const body = { token: linkToken.token, ...(password ? { password } : {}), ...(name ? { name } : {}) };
    const before = getToken();
    call<SignedIn>('POST', '/auth/invitations/accept', body)
      .then(async (answer) => {
        // Signed in as another account before: that session ends, this tab is now the invited account's.
        if (before && before !== answer.token) await call('POST', '/auth/logout', undefined, before).catch(() => undefined);
        linkToken = undefined;
        $<HTMLInputElement>('accept-password').value = '';
        signedInAs(answer);
        toDashboard();
      })
      .catch((err: unknown) => say('accept-error', err instanceof Error ? err.message : String(err)));
  });
  $('reset-form').addEventListener('submit', (e) => {
    e.preventDefault();
    say('reset-error', '');
    if (linkToken?.kind !== 'reset') return;
    call<SignedIn>('POST', '/auth/password-reset/confirm', { token: linkToken.token, password: $<HTMLInputElement>('reset-password').value }, null)
      .then((answer) => {
        linkToken = undefined;
        $<HTMLInputElement>('reset-password').value = '';
        signedInAs(answer);
        toDashboard();
      })
      .catch((err: unknown) => say('reset-error', err instanceof Error ? err.message : String(err)));
  });
}

async function showAccept(): Promise<void> {
  const user = signedIn() ? await loadMe().then(() => me?.user).catch(() => undefined) : undefined;
  showOnly('accept-page');
  const password = $<HTMLInputElement>('accept-password');
  password.required = !user;
  $('accept-intro').textContent = user
    ? `You were invited. You are signed in as ${user.email}: if the invitation is for this email, just join. For another email, type that account's password, or choose one for a new account.`
    : 'You were invited. New here: choose a password (10 characters or more). Already have an account with the invited email: type its password.';
  password.focus();
}

// ---- signed in: who, which projects ----

async function loadMe(): Promise<void> {
  const [who, list] = await Promise.all([call<{ user: User; organizations: Membership[] }>('GET', '/auth/me'), call<{ projects: Project[] }>('GET', '/admin/projects')]);
  me = who;
  projects = list.projects;
}


export function currentProject(): Project | undefined {
  const id = sessionStorage.getItem(PROJECT_ITEM) ?? localStorage.getItem(PROJECT_ITEM);
  return projects.find((p) => p.id === id) ?? projects[0];
}

function chooseProject(id: string): void {
  sessionStorage.removeItem(ORG_ITEM);
  sessionStorage.setItem(PROJECT_ITEM, id);
  localStorage.setItem(PROJECT_ITEM, id);
}

const ORG_ITEM = 'analytics.org';

/** The organization of the current project (its settings need admin there). */
const projectOrg = (): Membership | undefined => me?.organizations.find((o) => o.id === currentProject()?.org_id);
/** The signed-in user's role in the current project's organization (saved definitions and shares need editor). */
export const projectRole = (): Role | undefined => projectOrg()?.role;

/** The organization the members and audit pages are about: the one chosen there, else the current project's, else the first. */
function currentOrg(): Membership | undefined {
  const chosen = sessionStorage.getItem(ORG_ITEM);
  return me?.organizations.find((o) => o.id === chosen) ?? me?.organizations.find((o) => o.id === currentProject()?.org_id) ?? me?.organizations[0];
}

function renderNav(page: string): void {
  const project = currentProject();
  const switcher = $<HTMLSelectElement>('project-switcher');
  const groups = (me?.organizations ?? []).map((org) =>
    el('optgroup', { label: `${org.name} (${org.role})` }, ...projects.filter((p) => p.org_id === org.id).map((p) => el('option', { value: p.id, textContent: p.name, selected: p.id === project?.id }))),
  );
  switcher.replaceChildren(...groups.filter((g) => g.children.length > 0));
  switcher.disabled = projects.length === 0;
  $('project-title').textContent = project ? ` · ${project.name}` : '';
  // On the members and audit pages, any organization of the user (one without projects too).
  const orgPage = page === 'members' || page === 'audit';
  $('org-choice').hidden = !orgPage || (me?.organizations.length ?? 0) < 2;
  $<HTMLSelectElement>('org-switcher').replaceChildren(...(me?.organizations ?? []).map((o) => el('option', { value: o.id, textContent: `${o.name} (${o.role})`, selected: o.id === currentOrg()?.id })));
  const projectAdmin = atLeast(projectOrg()?.role, 'admin');
  const someAdmin = (me?.organizations ?? []).some((o) => atLeast(o.role, 'admin'));
  for (const [id, target, shown] of [
    ['nav-dashboard', '', true],
    ['nav-settings', 'settings', projectAdmin],
    ['nav-members', 'members', someAdmin],
    ['nav-audit', 'audit', someAdmin],
    ['nav-account', 'account', true],
  ] as const) {
    const link = $(id);
    link.hidden = !shown;
    if (target === page) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** The session's read key of the current project (minted when needed); undefined when there is none to read. */
export async function readKey(fresh = false): Promise<string | undefined> {
  const project = currentProject();
  if (!project) return undefined;
  try {
    return await readKeyFor(project.id, fresh);
  } catch (e) {
    await lostAccess(e);
    return undefined;
  }
}

let lastRemint = 0;

/** The dashboard's read key was refused: a new one once (it expired), else access to the project has ended. */
export async function readKeyRefused(): Promise<void> {
  if (Date.now() - lastRemint < 10_000) return lostAccess(new AccountRefusal(404, 'not_found'));
  lastRemint = Date.now();
  if (await readKey(true)) hooks.showDashboard();
}

/** Minting a read key failed: the session ended (sign in again) or the membership did (the projects left, or sign-in). */
async function lostAccess(e: unknown): Promise<void> {
  if (e instanceof AccountRefusal && e.status === 401) {
    forgetSession();
    return showSignedOut(e.message);
  }
  const lost = currentProject();
  try {
    await loadMe();
  } catch (err) {
    forgetSession();
    return showSignedOut(err instanceof Error ? err.message : String(err));
  }
  if (lost && projects.some((p) => p.id === lost.id)) {
    // Still a member, yet its read key is refused twice in a row: say so rather than ask again and again.
    showOnly();
    return notice(`The service refused the read key of ${lost.name}${e instanceof Error ? `: ${e.message}` : '.'}`);
  }
  if (projects.length === 0) {
    await call('POST', '/auth/logout').catch(() => undefined);
    forgetSession();
    return showSignedOut(`You no longer have access to ${lost ? `the project ${lost.name}` : 'any project'}: ask an admin to invite you again.`);
  }
  await route();
  notice(`You no longer have access to ${lost ? `the project ${lost.name}` : 'that project'}.`);
}

function notice(text: string): void {
  const box = $('people-message');
  box.textContent = text;
  box.hidden = false;
}

/** Shows the page the hash names (signed in), the dashboard (a pasted key) or the signed-out page. */
export async function route(): Promise<void> {
  if (await openedLink()) return;
  if (!signedIn()) {
    if (sessionStorage.getItem('analytics.readKey')) return hooks.showDashboard();
    return showSignedOut();
  }
  try {
    if (!me) await loadMe();
  } catch (e) {
    return refused(e, 'login-error');
  }
  const page = location.hash.replace(/^#\/?/, '');
  renderNav(page);
  const show = { settings: showSettings, members: showMembers, account: showAccount, audit: showAudit }[page];
  if (show) {
    // Focus on the page's title, so a screen reader announces the page and Tab starts from it.
    const shown = show();
    $(`${page}-title`).focus();
    return shown;
  }
  if (!currentProject()) {
    showOnly();
    return notice(`You are signed in as ${me!.user.email}, and no project is shared with you yet: an admin of an organization can invite you.`);
  }
  hooks.showDashboard();
}

/** Sign out: this session ends on the server (POST /auth/logout, its read keys revoked), then here. */
export async function signOut(): Promise<void> {
  await call('POST', '/auth/logout').catch(() => undefined);
  forgetSession();
  history.pushState(null, '', location.pathname + location.search);
  await showSignedOut();
}

/** "You cannot" in words, with the page's content hidden: viewers and editors see no key or member management. */
function roleTooLow(org: Membership | undefined, errorId: string, bodyId: string | undefined, what: string): boolean {
  const role = org?.role;
  if (atLeast(role, 'admin')) return false;
  if (bodyId) $(bodyId).hidden = true;
  say(errorId, `Your role in ${org?.name ?? 'this organization'} is ${role ?? 'none'}: ${what} need the admin role. (403 insufficient_role)`);
  return true;
}

// ---- project settings ----

async function showSettings(): Promise<void> {
  showOnly('settings-page');
  say('settings-error', '');
  for (const id of ['project-status', 'origin-status', 'keys-status']) say(id, '');
  $('new-key').hidden = true;
  const project = currentProject();
  $('settings-body').hidden = false;
  if (!project) return say('settings-error', 'No project yet.');
  $('settings-title').textContent = `Settings of ${project.name}`;
  if (roleTooLow(projectOrg(), 'settings-error', 'settings-body', 'project settings and keys')) return;
  $<HTMLInputElement>('project-name').value = project.name;
  $<HTMLInputElement>('project-retention').value = String(project.retention_days);
  renderTimeZones(project.timezone ?? 'UTC');
  renderOrigins(project);
  await renderKeys(project);
}

/** The time zone select: every zone the browser knows (Intl.supportedValuesOf), UTC first, the project's selected. */
function renderTimeZones(current: string): void {
  const zones = ['UTC', ...(Intl.supportedValuesOf?.('timeZone') ?? []).filter((z) => z !== 'UTC')];
  if (!zones.includes(current)) zones.unshift(current);
  $<HTMLSelectElement>('project-timezone').replaceChildren(...zones.map((z) => el('option', { value: z, textContent: z.replaceAll('_', ' '), selected: z === current })));
}

async function patchProject(project: Project, body: Partial<Pick<Project, 'name' | 'allowed_origins' | 'retention_days' | 'timezone'>>, statusId: string, done: string): Promise<void> {
  try {
    const answer = await call<{ project: Project }>('PATCH', `/admin/projects/${project.id}`, body);
    projects = projects.map((p) => (p.id === project.id ? answer.project : p));
    renderNav('settings');
    renderOrigins(answer.project);
    say(statusId, done);
  } catch (e) {
    refused(e, statusId);
  }
}

function renderOrigins(project: Project): void {
  const list = $('origins');
  list.replaceChildren(
    ...project.allowed_origins.map((origin) => {
      const remove = el('button', { type: 'button', className: 'secondary small', textContent: 'Remove' });
      remove.setAttribute('aria-label', `Remove ${origin}`);
      remove.onclick = () => void patchProject(project, { allowed_origins: project.allowed_origins.filter((o) => o !== origin) }, 'origin-status', `Removed ${origin}.`);
      const li = el('li', {}, el('span', { className: 'row-label' }, origin), remove);
      li.dataset['origin'] = origin;
      return li;
    }),
  );
  if (project.allowed_origins.length === 0) list.append(el('li', { className: 'empty' }, 'None: events are accepted from any origin.'));
}

interface KeyInfo {
  prefix: string;
  kind: string;
  env: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

async function renderKeys(project: Project): Promise<void> {
  let keys: KeyInfo[];
  try {
    keys = (await call<{ keys: KeyInfo[] }>('GET', `/admin/projects/${project.id}/keys`)).keys;
  } catch (e) {
    return refused(e, 'keys-status');
  }
  $('keys')
    .querySelector('tbody')!
    .replaceChildren(
      ...keys.map((k) => {
        const action = k.revoked_at
          ? el('span', {})
          : confirmButton('Revoke', `Revoke ${k.prefix}`, 'Confirm revoke', async () => {
              try {
                await call('DELETE', `/admin/keys/${encodeURIComponent(k.prefix)}`);
                say('keys-status', `Revoked ${k.prefix}: it is refused from now on.`);
                await renderKeys(project);
              } catch (e) {
                refused(e, 'keys-status');
              }
            });
        const row = el('tr', {}, el('td', { className: 'mono' }, `${k.kind}_${k.env}_${k.prefix}`), el('td', {}, `${k.kind} ${k.env}`), el('td', {}, dateTime(k.created_at)), el('td', {}, dateTime(k.last_used_at)), el('td', {}, k.revoked_at ? `revoked ${dateTime(k.revoked_at)}` : 'active'), el('td', {}, action));
        row.dataset['prefix'] = k.prefix;
        row.dataset['state'] = k.revoked_at ? 'revoked' : 'active';
        return row;
      }),
    );
}

function copyButton(buttonId: string, inputId: string, statusId: string): void {
  $(buttonId).addEventListener('click', () => {
    const input = $<HTMLInputElement>(inputId);
    input.select();
    navigator.clipboard
      .writeText(input.value)
      .then(() => say(statusId, 'Copied.'))
      .catch(() => say(statusId, 'Selected: copy it with Ctrl+C or ⌘C.'));
  });
}

function setUpSettingsForms(): void {
  $('project-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const project = currentProject();
    if (!project) return;
    const name = $<HTMLInputElement>('project-name').value.trim();
    const retention = Number($<HTMLInputElement>('project-retention').value);
    const timezone = $<HTMLSelectElement>('project-timezone').value;
    // The time zone is sent only when changed (a server before issue 47 refuses the field).
    void patchProject(project, { name, retention_days: retention, ...(timezone !== (project.timezone ?? 'UTC') ? { timezone } : {}) }, 'project-status', 'Saved.').then(() => {
      $('settings-title').textContent = `Settings of ${currentProject()?.name ?? ''}`;
    });
  });
  $('origin-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const project = currentProject();
    const input = $<HTMLInputElement>('origin-input');
    if (!project) return;
    const origin = input.value.trim();
    void patchProject(project, { allowed_origins: [...project.allowed_origins, origin] }, 'origin-status', `Added ${origin}.`).then(() => {
      if (!$('origin-status').textContent?.includes('(')) input.value = '';
    });
  });
  $('key-create-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const project = currentProject();
    if (!project) return;
    const body = { kind: $<HTMLSelectElement>('key-kind').value, env: $<HTMLSelectElement>('key-env').value };
    call<{ key: string; prefix: string }>('POST', `/admin/projects/${project.id}/keys`, body)
      .then(async (minted) => {
        $<HTMLInputElement>('new-key-value').value = minted.key;
        $('new-key').hidden = false;
        say('keys-status', `Created ${minted.prefix}. Its secret is shown here once: this page will not show it again.`);
        $<HTMLInputElement>('new-key-value').focus();
        await renderKeys(project);
      })
      .catch((err: unknown) => refused(err, 'keys-status'));
  });
  copyButton('new-key-copy', 'new-key-value', 'keys-status');
}

// ---- members and invitations ----

interface Member {
  user_id: string;
  email: string;
  name: string | null;
  role: Role;
  joined_at: string;
}
interface Invitation {
  id: string;
  email: string;
  role: Role;
  expires_at: string;
}

/** The roles the caller may give: up to admin, owner too for an owner. */
const grantable = (mine: Role | undefined): Role[] => ROLE_ORDER.filter((r) => r !== 'owner' || mine === 'owner');

async function showMembers(): Promise<void> {
  showOnly('members-page');
  for (const id of ['members-error', 'members-status', 'invite-status']) say(id, '');
  $('members-body').hidden = false;
  const org = currentOrg();
  $('members-title').textContent = org ? `Members of ${org.name}` : 'Members';
  if (roleTooLow(org, 'members-error', 'members-body', 'members and invitations')) return;
  $<HTMLSelectElement>('invite-role').replaceChildren(...grantable(org?.role).map((r) => el('option', { value: r, textContent: r })));
  // No rows of an earlier visit (or another organization) while this one's load: a click on one would arm a button
  // the fresh rows replace.
  $('members').querySelector('tbody')!.replaceChildren();
  $('invitations').replaceChildren();
  await renderMembers();
}

async function renderMembers(): Promise<void> {
  const org = currentOrg();
  if (!org) return;
  let members: Member[];
  let invitations: Invitation[];
  try {
    [members, invitations] = await Promise.all([
      call<{ members: Member[] }>('GET', `/admin/orgs/${org.id}/members`).then((a) => a.members),
      call<{ invitations: Invitation[] }>('GET', `/admin/orgs/${org.id}/invitations`).then((a) => a.invitations),
    ]);
  } catch (e) {
    return refused(e, 'members-error');
  }
  const mine = org.role;
  $('members')
    .querySelector('tbody')!
    .replaceChildren(
      ...members.map((m) => {
        const self = m.user_id === me?.user.id;
        const canChange = !self && (m.role !== 'owner' || mine === 'owner');
        let role: Node = document.createTextNode(m.role);
        if (canChange) {
          const select: HTMLSelectElement = document.createElement('select');
          select.append(...grantable(mine).map((r) => el('option', { value: r, textContent: r, selected: r === m.role })));
          select.setAttribute('aria-label', `Role of ${m.email}`);
          select.onchange = () =>
            void call('PATCH', `/admin/orgs/${org.id}/members/${m.user_id}`, { role: select.value })
              .then(() => say('members-status', `${m.email} is now ${select.value}.`))
              .catch((e: unknown) => refused(e, 'members-status'));
          role = select;
        }
        const remove = canChange
          ? confirmButton('Remove', `Remove ${m.email}`, 'Confirm remove', async () => {
              try {
                await call('DELETE', `/admin/orgs/${org.id}/members/${m.user_id}`);
                say('members-status', `Removed ${m.email}: their access to the organization's projects has ended.`);
                await renderMembers();
              } catch (e) {
                refused(e, 'members-status');
              }
            })
          : el('span', {}, self ? 'you' : '');
        const row = el('tr', {}, el('td', {}, m.name ?? ''), el('td', {}, m.email), el('td', {}, role), el('td', {}, dateTime(m.joined_at)), el('td', {}, remove));
        row.dataset['email'] = m.email;
        row.dataset['role'] = m.role;
        return row;
      }),
    );
  $('invitations').replaceChildren(
    ...invitations.map((i) => {
      const withdraw = confirmButton('Withdraw', `Withdraw the invitation of ${i.email}`, 'Confirm withdraw', async () => {
        try {
          await call('DELETE', `/admin/orgs/${org.id}/invitations/${i.id}`);
          await renderMembers();
        } catch (e) {
          refused(e, 'invite-status');
        }
      });
      const li = el('li', {}, el('span', { className: 'row-label' }, `${i.email}, ${i.role}, until ${dateTime(i.expires_at)}`), withdraw);
      li.dataset['email'] = i.email;
      return li;
    }),
  );
  if (invitations.length === 0) $('invitations').append(el('li', { className: 'empty' }, 'None.'));
}

function setUpMemberForms(): void {
  $('invite-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const org = currentOrg();
    if (!org) return;
    say('invite-status', '');
    const email = $<HTMLInputElement>('invite-email').value;
    call<{ accept_url: string; invitation: Invitation }>('POST', `/admin/orgs/${org.id}/invitations`, { email, role: $<HTMLSelectElement>('invite-role').value })
      .then(async (answer) => {
        $<HTMLInputElement>('invite-url').value = answer.accept_url;
        $('invite-link').hidden = false;
        $<HTMLInputElement>('invite-email').value = '';
        say('invite-status', `Invited ${answer.invitation.email} as ${answer.invitation.role}: send them the link.`);
        await renderMembers();
      })
      .catch((err: unknown) => refused(err, 'invite-status'));
  });
  copyButton('invite-copy', 'invite-url', 'invite-status');
}

// ---- the account ----

interface SessionInfo {
  id: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  user_agent: string | null;
  current: boolean;
}

/** A User-Agent in a few words: the browser and the system. */
function browserOf(ua: string | null): string {
  if (!ua) return 'unknown';
  const browser = /(Edg|Firefox|Chrome|Safari|HeadlessChrome)\/[\d.]+/.exec(ua)?.[0] ?? ua.slice(0, 40);
  const system = /(Windows|Mac OS X|Android|iPhone|Linux)/.exec(ua)?.[0] ?? '';
  return system ? `${browser} on ${system}` : browser;
}

async function showAccount(): Promise<void> {
  showOnly('account-page');
  for (const id of ['account-error', 'password-status']) say(id, '');
  say('account-who', me ? `Signed in as ${me.user.name ? `${me.user.name} (${me.user.email})` : me.user.email}.` : '');
  $<HTMLInputElement>('password-username').value = me?.user.email ?? '';
  await renderSessions();
}

async function renderSessions(): Promise<void> {
  let sessions: SessionInfo[];
  try {
    sessions = (await call<{ sessions: SessionInfo[] }>('GET', '/auth/sessions')).sessions;
  } catch (e) {
    return refused(e, 'account-error');
  }
  $('sessions')
    .querySelector('tbody')!
    .replaceChildren(
      ...sessions.map((s) => {
        const action = s.current
          ? el('span', {}, 'this browser')
          : confirmButton('End', `End the session signed in ${dateTime(s.created_at)}`, 'Confirm end', async () => {
              try {
                await call('DELETE', `/auth/sessions/${encodeURIComponent(s.id)}`);
                await renderSessions();
              } catch (e) {
                refused(e, 'account-error');
              }
            });
        const row = el('tr', {}, el('td', {}, dateTime(s.created_at)), el('td', {}, dateTime(s.last_used_at)), el('td', {}, dateTime(s.expires_at)), el('td', {}, browserOf(s.user_agent)), el('td', {}, action));
        row.dataset['session'] = s.id;
        row.dataset['current'] = String(s.current);
        return row;
      }),
    );
}

function setUpAccountForms(): void {
  $('sign-out-everywhere').addEventListener('click', () => {
    void (async () => {
      try {
        const { sessions } = await call<{ sessions: SessionInfo[] }>('GET', '/auth/sessions');
        for (const s of sessions.filter((x) => !x.current)) await call('DELETE', `/auth/sessions/${encodeURIComponent(s.id)}`);
        await signOut();
        say('login-error', 'Signed out everywhere: every session of your account has ended.');
      } catch (e) {
        refused(e, 'account-error');
      }
    })();
  });
  $('password-form').addEventListener('submit', (e) => {
    e.preventDefault();
    say('password-status', '');
    const body = { current_password: $<HTMLInputElement>('password-current').value, new_password: $<HTMLInputElement>('password-new').value };
    call('POST', '/auth/password', body)
      .then(async () => {
        for (const id of ['password-current', 'password-new']) $<HTMLInputElement>(id).value = '';
        say('password-status', 'Password changed. Your other sessions have ended.');
        await renderSessions();
      })
      .catch((err: unknown) => refused(err, 'password-status'));
  });
}

// ---- the audit log ----

interface AuditEntry {
  at: string;
  actor: { type: string; id: string | null; name: string | null };
  action: string;
  target: { type: string; id: string | null; name: string | null };
  details: Record<string, unknown>;
}

async function showAudit(): Promise<void> {
  showOnly('audit-page');
  say('audit-error', '');
  const org = currentOrg();
  $('audit-title').textContent = org ? `Audit log of ${org.name}` : 'Audit log';
  const body = $('audit').querySelector('tbody')!;
  body.replaceChildren();
  if (roleTooLow(org, 'audit-error', undefined, 'the audit log') || !org) return;
  let entries: AuditEntry[];
  try {
    entries = (await call<{ entries: AuditEntry[] }>('GET', `/admin/orgs/${org.id}/audit?limit=200`)).entries;
  } catch (e) {
    return refused(e, 'audit-error');
  }
  body.replaceChildren(
    ...entries.map((a) => {
      const row = el('tr', {}, el('td', {}, dateTime(a.at)), el('td', {}, a.actor.name ?? a.actor.type), el('td', {}, a.action), el('td', {}, `${a.target.type} ${a.target.name ?? a.target.id ?? ''}`), el('td', { className: 'props' }, Object.keys(a.details).length ? JSON.stringify(a.details) : ''));
      row.dataset['action'] = a.action;
      return row;
    }),
  );
  if (entries.length === 0) body.append(el('tr', {}, el('td', { colSpan: 5, className: 'empty' }, 'Nothing yet.')));
}

// ---- start ----

/**
 * The page at start: a link's page (#invitation=, #reset=, #sso=), the signed-in pages, the pasted key's dashboard,
 * or the signed-out page (first run while no user exists). `keyMessage`: the key card's alert (a key in the URL).
 */
export async function startPeople(dashboard: DashboardHooks, keyMessage = ''): Promise<void> {
  hooks = dashboard;
  setUpSignedOutForms();
  setUpSettingsForms();
  setUpMemberForms();
  setUpAccountForms();
  $<HTMLSelectElement>('org-switcher').addEventListener('change', (e) => {
    sessionStorage.setItem(ORG_ITEM, (e.target as HTMLSelectElement).value);
    void route();
  });
  $<HTMLSelectElement>('project-switcher').addEventListener('change', (e) => {
    // The same page for the project chosen (its settings, its organization's members). What is on screen is the
    // previous project's until the new load ends: not "loaded" meanwhile (a reader waiting for the state saw old figures).
    document.body.dataset['state'] = 'loading';
    chooseProject((e.target as HTMLSelectElement).value);
    void route();
  });
  if (keyMessage && !signedIn() && !/^#(invitation|reset|sso)=/.test(location.hash)) return showSignedOut('', keyMessage);
  return route();
}

/**
 * A link's page when the fragment is one (#invitation=, #reset=, #sso=): its token is taken out of the address at
 * once. True when it was one (the page is shown or the sign-in completed).
 */
async function openedLink(): Promise<boolean> {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const invitation = fragment.get('invitation');
  const reset = fragment.get('reset');
  const sso = fragment.get('sso');
  if (!invitation && !reset && !sso) return false;
  history.replaceState(null, '', location.pathname + location.search);
  if (invitation) {
    linkToken = { kind: 'invitation', token: invitation };
    await showAccept();
  } else if (reset) {
    linkToken = { kind: 'reset', token: reset };
    showOnly('reset-page');
    $<HTMLInputElement>('reset-password').focus();
  } else if (sso) {
    const secret = sessionStorage.getItem(SSO_SECRET_ITEM) ?? '';
    sessionStorage.removeItem(SSO_SECRET_ITEM);
    try {
      signedInAs(await call<SignedIn>('POST', '/auth/oidc/complete', { code: sso, secret }, null));
    } catch (e) {
      await showSignedOut(e instanceof Error ? e.message : String(e));
      return true;
    }
    await route();
  }
  return true;
}
