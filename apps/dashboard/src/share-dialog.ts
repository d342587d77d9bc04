// The Share dialog of the signed-in dashboard (issue 46, editors): a share link of the project made with an optional
// name, password, last day, saved segment and embedding sites (POST /admin/projects/:id/shares), its `url` shown once
// with a Copy button, the project's links listed (GET …/shares) and revoked (DELETE …/shares/:share_id).
// The read-only page such a link opens is share.ts's. docs/dashboard.md "The Share dialog".
import { $, el } from './dom';
import { confirmButton, currentProject } from './people';
import { canEdit, savedLists } from './saved';
import { byName, expiresAtOf } from './saved-state';
import { call } from './session';

/** A share link as the API lists it; `segment` is the snapshot taken at creation (or its id), null for none. */
export interface ShareLink {
  id: string;
  name: string | null;
  expires_at: string | null;
  has_password: boolean;
  segment: { id: string; name: string } | string | null;
  embed_origins: string[];
  created_at?: string;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
const say = (id: string, text: string) => void ($(id).textContent = text);
const dateTime = (iso: string) => new Date(iso).toISOString().slice(0, 16).replace('T', ' ');

let appliedSegment: () => string | undefined = () => undefined;

/** The header's Share button: shown on the dashboard to editors of the project (signed in), hidden otherwise. */
export function showShareButton(shown: boolean): void {
  $('share-open').hidden = !(shown && canEdit());
}

const segmentName = (s: ShareLink['segment']): string => {
  if (s === null || s === undefined) return 'none';
  if (typeof s === 'string') return savedLists().segments.find((x) => x.id === s)?.name ?? s;
  return s.name;
};

function expiryText(iso: string | null): string {
  if (!iso) return 'never';
  return `${dateTime(iso)} UTC${Date.parse(iso) <= Date.now() ? ' (expired)' : ''}`;
}

async function renderShares(): Promise<void> {
  const project = currentProject();
  const body = $('shares').querySelector('tbody')!;
  if (!project) return;
  let shares: ShareLink[];
  try {
    shares = (await call<{ shares: ShareLink[] }>('GET', `/admin/projects/${encodeURIComponent(project.id)}/shares`)).shares;
  } catch (e) {
    say('share-dialog-error', message(e));
    return;
  }
  body.replaceChildren(
    ...shares.map((s) => {
      const label = s.name || '(no name)';
      const revoke = confirmButton('Revoke', `Revoke the link ${label}`, 'Confirm revoke', async () => {
        try {
          await call('DELETE', `/admin/projects/${encodeURIComponent(project.id)}/shares/${encodeURIComponent(s.id)}`);
          say('share-status', `Revoked ${label}: the link no longer opens the dashboard.`);
          await renderShares();
        } catch (e) {
          say('share-dialog-error', message(e));
        }
      });
      const row = el(
        'tr',
        {},
        el('td', {}, label),
        el('td', {}, expiryText(s.expires_at)),
        el('td', {}, s.has_password ? 'yes' : 'no'),
        el('td', {}, segmentName(s.segment)),
        el('td', {}, s.embed_origins.length ? s.embed_origins.join(' ') : 'none'),
        el('td', {}, revoke),
      );
      row.dataset['share'] = s.id;
      row.dataset['password'] = String(s.has_password);
      return row;
    }),
  );
  if (shares.length === 0) body.append(el('tr', {}, el('td', { colSpan: 6, className: 'empty' }, 'No links yet.')));
}

function open(): void {
  const dialog = $<HTMLDialogElement>('share-dialog');
  const project = currentProject();
  $('share-dialog-title').textContent = project ? `Share ${project.name}` : 'Share';
  for (const id of ['share-dialog-error', 'share-status']) say(id, '');
  for (const id of ['share-name', 'share-link-password', 'share-expires', 'share-origins']) $<HTMLInputElement>(id).value = '';
  $<HTMLInputElement>('share-expires').min = new Date(Date.now()).toISOString().slice(0, 10);
  $<HTMLInputElement>('share-url').value = '';
  $('share-result').hidden = true;
  const applied = appliedSegment();
  $<HTMLSelectElement>('share-link-segment').replaceChildren(
    el('option', { value: '', textContent: 'None: everything' }),
    ...byName(savedLists().segments).map((s) => el('option', { value: s.id, textContent: s.name, selected: s.id === applied })),
  );
  $('shares').querySelector('tbody')!.replaceChildren();
  dialog.showModal();
  $<HTMLInputElement>('share-name').focus();
  void renderShares();
}

/** The Share button and dialog (set up once). `segment`: the segment applied on the page, chosen in the form by default. */
export function setUpShareDialog(segment: () => string | undefined): void {
  appliedSegment = segment;
  const dialog = $<HTMLDialogElement>('share-dialog');
  $('share-open').addEventListener('click', open);
  $('share-close').addEventListener('click', () => dialog.close());
  $('share-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const project = currentProject();
    if (!project) return;
    for (const id of ['share-dialog-error', 'share-status']) say(id, '');
    const name = $<HTMLInputElement>('share-name').value.trim();
    const password = $<HTMLInputElement>('share-link-password').value;
    const expires = expiresAtOf($<HTMLInputElement>('share-expires').value, Date.now());
    const segment = $<HTMLSelectElement>('share-link-segment').value;
    const origins = $<HTMLInputElement>('share-origins').value.split(/[\s,]+/).filter(Boolean);
    if (expires === null) return say('share-dialog-error', 'The last day must be today or later (UTC).');
    const body = { ...(name ? { name } : {}), ...(password ? { password } : {}), ...(expires ? { expires_at: expires } : {}), ...(segment ? { segment } : {}), ...(origins.length ? { embed_origins: origins } : {}) };
    call<{ share: ShareLink; url: string }>('POST', `/admin/projects/${encodeURIComponent(project.id)}/shares`, body)
      .then(async (answer) => {
        $<HTMLInputElement>('share-link-password').value = '';
        $<HTMLInputElement>('share-url').value = answer.url;
        $('share-result').hidden = false;
        say('share-status', `Created ${answer.share.name || 'a link'}${answer.share.has_password ? ', with a password' : ''}. Copy it now: it is shown only once.`);
        $<HTMLInputElement>('share-url').focus();
        $<HTMLInputElement>('share-url').select();
        await renderShares();
      })
      .catch((err: unknown) => say('share-dialog-error', message(err)));
  });
  $('share-copy').addEventListener('click', () => {
    const input = $<HTMLInputElement>('share-url');
    input.select();
    navigator.clipboard
      .writeText(input.value)
      .then(() => say('share-status', 'Copied.'))
      .catch(() => say('share-status', 'Selected: copy it with Ctrl+C or ⌘C.'));
  });
}
