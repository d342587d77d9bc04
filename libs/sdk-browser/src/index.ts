// Browser client of the analytics API: buffered events over POST /v1/batch, $pageview on load and on SPA route
// changes, silent under Do-Not-Track / Global Privacy Control, nothing stored on the device unless `persistence: 'local'`.
// Built to ES module and IIFE (window.analytics).

export type Properties = Record<string, unknown>;

export interface InitOptions {
  /** Base URL of the service, e.g. `https://analytics.example.com`. */
  endpoint: string;
  /** The project's publishable key (`pk_…`); the page's origin must be in the project's `allowed_origins`. */
  key: string;
  /** Emit `$pageview` on init, on every route change (history pushState/replaceState, popstate) and on a back/forward-cache restore. Default true. */
  autoPageview?: boolean;
  /** Flush when this many events are buffered. Default 20. */
  flushAt?: number;
  /** Flush this long after the first buffered event, in ms. Default 2000. */
  flushInterval?: number;
  /**
   * `'none'` (default): nothing is stored on the device and events carry no anonymous_id (the server counts a visitor
   * by a daily-rotating hash). `'local'`: a permanent anonymous id and the user id are kept in localStorage, for sites
   * that have their visitors' consent.
   */
  persistence?: 'none' | 'local';
  /** Opt-in: `$outbound` with `{ url }` on a click (or middle-click) on a link to another host. Default false. */
  outboundLinks?: boolean;
  /**
   * Opt-in: `$download` with `{ url }` on a click on a link to a file: a link with a `download` attribute or whose path
   * ends in one of these extensions (`true`: DOWNLOAD_EXTENSIONS). Default false. Takes precedence over `$outbound`.
   */
  fileDownloads?: boolean | string[];
  /** Opt-in: this page is a "not found" page: `$404` with `{ path }` on init (the site's 404 template sets it). Default false. */
  notFound?: boolean;
}

/** The file types `fileDownloads: true` counts (Plausible's list, plus a few archives and disk images). */
export const DOWNLOAD_EXTENSIONS: readonly string[] = 'pdf xlsx xls docx doc txt rtf csv exe key pps ppt pptx 7z pkg rar gz tgz zip avi mov mp4 mpeg wmv midi mp3 wav wma dmg iso msi apk epub'.split(' ');

/** One event as the SDK sends it in a `POST /v1/batch` body. */
export interface WireEvent {
  event: string;
  event_id: string;
  timestamp: string;
  anonymous_id?: string;
  user_id?: string;
  url: string;
  path: string;
  referrer?: string;
  properties: Properties;
}

const AID = 'analytics_anonymous_id';
const UID = 'analytics_user_id';
const MAX_QUEUE = 500;
const MAX_WAIT = 60_000;
const KEEPALIVE_BYTES = 60_000; // keepalive bodies share a 64 KiB budget per page

let cfg: Required<InitOptions> | undefined;
let storage: Storage | undefined;
const memory: Record<string, string> = {};
let anonymousId: string | undefined; // only with persistence 'local'
let userId: string | undefined;
let queue: WireEvent[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;
let wait = 0; // current back-off after a failed flush, 0 when healthy
let lastUrl: string | undefined;
let referrer = '';

const get = (k: string): string | null => (storage ? storage.getItem(k) : (memory[k] ?? null));
const set = (k: string, v: string): string => (storage ? storage.setItem(k, v) : (memory[k] = v), v);
const del = (k: string) => (storage ? storage.removeItem(k) : delete memory[k]);

const uuid = (): string =>
  crypto.randomUUID
    ? crypto.randomUUID()
    : '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) => (+c ^ (crypto.getRandomValues(new Uint8Array(1))[0]! & (15 >> (+c / 4)))).toString(16));

// The page's URL without its fragment (fragments can hold tokens and are not route changes), as the server allows.
const here = () => location.href.split('#')[0]!.slice(0, 2048);

const optedOut = (): boolean => {
  const n = navigator as Navigator & { globalPrivacyControl?: boolean };
  const w = window as Window & { doNotTrack?: string };
  return n.doNotTrack === '1' || n.doNotTrack === 'yes' || w.doNotTrack === '1' || n.globalPrivacyControl === true;
};

/**
 * Starts the client. Does nothing at all (no storage, no network) when Do-Not-Track or Global Privacy Control is on.
 * A second call is ignored. Calls to the other functions before init are ignored.
 */
export function init(options: InitOptions): void {
  if (cfg || optedOut()) return;
  if (!/^pk_/.test(options.key)) throw new Error('analytics: the browser client takes a pk_ key');
  cfg = { autoPageview: true, flushAt: 20, flushInterval: 2000, persistence: 'none', outboundLinks: false, fileDownloads: false, notFound: false, ...options, endpoint: options.endpoint.replace(/\/+$/, '') };
  if (cfg.persistence === 'local') {
    try {
      storage = localStorage;
      storage.setItem(AID + '_probe', '1');
      storage.removeItem(AID + '_probe');
    } catch {
      storage = undefined;
    }
    anonymousId = get(AID) || set(AID, uuid());
    userId = get(UID) || undefined;
  }
  referrer = document.referrer;

  const hidden = () => void flush(true);
  addEventListener('pagehide', hidden);
  document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && hidden());

  if (cfg.autoPageview) {
    const route = () => here() !== lastUrl && page();
    for (const name of ['pushState', 'replaceState'] as const) {
      const original = history[name];
      history[name] = function (this: History, ...args: Parameters<History['pushState']>) {
        original.apply(this, args);
        route();
      };
    }
    addEventListener('popstate', route);
    // A page restored from the back/forward cache is shown again without a load: count it as a view.
    addEventListener('pageshow', (e) => e.persisted && page());
    page();
  }
  if (cfg.notFound) notFound();
  const types = cfg.fileDownloads === true ? DOWNLOAD_EXTENSIONS : cfg.fileDownloads || [];
  if (cfg.outboundLinks || cfg.fileDownloads) {
    const clicked = (e: MouseEvent) => {
      const a = (e.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null;
      if (!a || (e.type === 'auxclick' && e.button !== 1)) return;
      const url = new URL(a.href);
      if (!/^https?:$/.test(url.protocol)) return;
      const ext = /\.([^./]+)$/.exec(url.pathname)?.[1]?.toLowerCase();
      const event = cfg!.fileDownloads && (a.hasAttribute('download') || (ext && types.indexOf(ext) >= 0)) ? '$download' : cfg!.outboundLinks && url.host !== location.host && '$outbound';
      if (!event) return;
      track(event, { url: url.href.split('#')[0]!.slice(0, 2048) });
      // The click may leave the page at once: sent now, with keepalive, so the request outlives it.
      void flush(true);
    };
    document.addEventListener('click', clicked, true);
    document.addEventListener('auxclick', clicked, true);
  }
}

/** Emits `$404` with the current path: for a page the site marks as not found (single-page apps call it on their 404 route). */
export function notFound(): void {
  track('$404', { path: location.pathname.slice(0, 2048) });
}

/** Buffers an event. Events over the spec's limits (name 1..128 chars, properties ≤ 8 KB) are dropped with a warning. */
export function track(event: string, properties?: Properties): void {
  if (!cfg) return;
  const props: Properties = {
    viewport: innerWidth + 'x' + innerHeight,
    language: navigator.language,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    ...properties,
  };
  if (!event || event.length > 128 || new Blob([JSON.stringify(props)]).size > 8192) {
    console.warn('analytics: dropped invalid event', event);
    return;
  }
  const url = here();
  queue.push({
    event,
    event_id: uuid(),
    timestamp: new Date().toISOString(),
    anonymous_id: anonymousId,
    user_id: userId,
    url,
    path: new URL(url).pathname.slice(0, 2048),
    referrer: referrer.slice(0, 2048) || undefined,
    properties: props,
  });
  if (queue.length >= cfg.flushAt && !wait) void flush();
  else schedule();
}

/** Emits `$pageview` for the current location (done automatically unless `autoPageview: false`). */
export function page(): void {
  if (!cfg) return;
  const url = here();
  // After a route change the previous page is the referrer, as it would be after a full navigation.
  if (lastUrl && lastUrl !== url) referrer = lastUrl;
  lastUrl = url;
  track('$pageview');
}

/**
 * Sets the user id sent on later events and calls `POST /v1/identify` (without anonymous_id under persistence 'none':
 * the server binds its daily visitor id). Kept across page loads only with persistence 'local'.
 */
export function identify(id: string, traits?: Properties): Promise<void> {
  if (!cfg) return Promise.resolve();
  userId = set(UID, id);
  return post('/v1/identify', { anonymous_id: anonymousId, user_id: id, traits }).then(
    () => {},
    () => {},
  );
}

/**
 * Forgets the user id (e.g. on logout) and, with persistence 'local', starts a new anonymous id. Buffered events keep
 * the ids they had.
 */
export function reset(): void {
  if (!cfg) return;
  userId = undefined;
  del(UID);
  if (anonymousId) anonymousId = set(AID, uuid());
}

/**
 * Sends every buffered event now. `pageHidden` (used on visibilitychange/pagehide) sends with `keepalive`, in
 * requests of at most ~60 KB, so the requests outlive the page.
 */
export function flush(pageHidden?: boolean): Promise<void> {
  clearTimeout(timer);
  timer = undefined;
  const sends: Promise<void>[] = [];
  while (cfg && queue.length) {
    const chunk: WireEvent[] = [];
    let bytes = 0;
    while (queue.length && chunk.length < 1000) {
      bytes += new Blob([JSON.stringify(queue[0])]).size;
      if (pageHidden && chunk.length && bytes > KEEPALIVE_BYTES) break;
      chunk.push(queue.shift()!);
    }
    sends.push(send(chunk, pageHidden));
  }
  return Promise.all(sends).then(() => {});
}

function schedule() {
  if (!timer && cfg) timer = setTimeout(flush, wait || cfg.flushInterval);
}

function send(events: WireEvent[], keepalive?: boolean): Promise<void> {
  const retry = (seconds = 0) => {
    // 5xx, 429 and network errors: keep the events (newest MAX_QUEUE) and retry with a doubling back-off.
    queue = events.concat(queue).slice(-MAX_QUEUE);
    wait = Math.min(Math.max(wait * 2 || cfg!.flushInterval, seconds * 1000), MAX_WAIT);
    schedule();
  };
  // sent_at: this device's clock at the send, as its events' timestamps; the server corrects them by the difference.
  return post('/v1/batch', { events, sent_at: new Date().toISOString() }, keepalive).then((res) => {
    if (res.status >= 500 || res.status === 429) retry(+res.headers.get('retry-after')! || 0);
    else wait = 0; // 2xx; any other 4xx is final (the batch is all-or-nothing): retrying unchanged cannot help
  }, () => retry());
}

// Errors a site owner must fix, each told once per page load: they answer every later request alike.
const warned: Record<string, string | undefined> = {};
function explain(status: number, error: string) {
  const fix =
    error === 'origin_not_allowed'
      ? "add the origin '" + location.origin + "' to the project's allowed_origins"
      : error === 'invalid_api_key' && 'no project of ' + cfg!.endpoint + ' has this pk_ key';
  if (fix && !warned[error]) console.warn('analytics: ' + status + ' ' + error + ': ' + (warned[error] = fix));
}

// Authorization rides on every request, keepalive ones too (sendBeacon cannot send headers). The body is JSON sent
// as text/plain, which the server parses as JSON; the CORS preflight for Authorization is cached by the browser.
const post = (path: string, body: unknown, keepalive?: boolean) =>
  fetch(cfg!.endpoint + path, {
    method: 'POST',
    keepalive,
    credentials: 'omit',
    headers: { Authorization: 'Bearer ' + cfg!.key, 'Content-Type': 'text/plain' },
    body: JSON.stringify(body),
  }).then((res) =>
    res.status === 401 || res.status === 403
      ? res.json().then(
          (b: { error?: string }) => (explain(res.status, '' + b.error), res),
          () => res,
        )
      : res,
  );

// The script tag's data attributes: <script src=".../analytics.min.js" data-endpoint data-key [data-outbound]
// [data-downloads[="pdf zip"]] [data-404] [data-persistence="local"] [data-no-pageview]> starts the client on load.
const tag = typeof document !== 'undefined' ? (document.currentScript as HTMLScriptElement | null) : null;
if (tag && tag.dataset.key) {
  const d = tag.dataset;
  init({
    endpoint: d.endpoint || new URL(tag.src).origin,
    key: d.key!,
    autoPageview: d.noPageview === undefined,
    persistence: d.persistence === 'local' ? 'local' : 'none',
    outboundLinks: d.outbound !== undefined,
    fileDownloads: d.downloads === undefined ? false : d.downloads ? d.downloads.split(/[\s,]+/) : true,
    notFound: d['404'] !== undefined,
  });
}
