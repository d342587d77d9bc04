// The live view (issue 47): GET /v1/live read as an event stream and drawn as each message arrives, without a reload.
// EventSource cannot send an Authorization header, and the key must never go in a URL: the stream is read with fetch
// and a body reader, and its Server-Sent Events are parsed here (data, event and comment lines, as the HTML standard
// says). A message comes at once and every 5 s; `: ping` comments between keep proxies from closing the connection.
import type { LiveMessage } from '@analytics/schema';
import { type Api, describeError } from './api';
import { $, el, setNumber } from './dom';

/** One parsed item of an event stream: a message (its event name and data) or a comment. */
export type SseItem = { event: string; data: string } | { comment: string };

/**
 * Splits event-stream text into items: each block ends with a blank line; `data:` lines join with newlines, `event:`
 * names it (default "message"), `:` starts a comment. Returns the items and the unfinished tail to keep.
 */
export function parseSse(text: string): { items: SseItem[]; rest: string } {
  const items: SseItem[] = [];
  const blocks = text.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) items.push({ comment: line.slice(1).trim() });
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) items.push({ event, data: data.join('\n') });
  }
  return { items, rest };
}

const RECONNECT_MS = 5_000;
const time = (iso: string) => iso.slice(11, 19);

let api: Api | undefined;
let running: AbortController | undefined;
let retryTimer: number | undefined;

const status = (text: string, state: 'connecting' | 'open' | 'waiting' | 'closed') => {
  const box = $('live-status');
  box.textContent = text;
  $('live-view').dataset['state'] = state;
};

/** The live section's figures from one message. */
export function renderLive(m: LiveMessage): void {
  setNumber($('live-visitors'), m.visitors);
  const minutes = $('live-minutes');
  const max = Math.max(1, ...m.pageviews_per_minute);
  const end = Math.floor(Date.parse(m.at) / 60_000) * 60_000;
  minutes.replaceChildren(
    ...m.pageviews_per_minute.map((n, i) => {
      const at = new Date(end - (m.pageviews_per_minute.length - 1 - i) * 60_000).toISOString();
      const bar = el('span', { className: 'minute', title: `${time(at).slice(0, 5)} UTC: ${n} pageview${n === 1 ? '' : 's'}` });
      bar.style.height = `${(n / max) * 100}%`;
      bar.dataset['value'] = String(n);
      return bar;
    }),
  );
  minutes.setAttribute('aria-label', `Pageviews per minute, last 30 minutes: ${m.pageviews_per_minute.reduce((a, b) => a + b, 0)} in all`);
  const list = (id: string, rows: Array<{ key: string; value: number }>) => {
    const top = Math.max(1, ...rows.map((r) => r.value));
    $(id).replaceChildren(
      ...(rows.length === 0
        ? [el('li', { className: 'empty' }, 'Nobody in the last 30 minutes.')]
        : rows.map((r) => {
            const count = el('span', { className: 'count' });
            setNumber(count, r.value);
            const bar = el('span', { className: 'bar' });
            bar.style.width = `${(r.value / top) * 100}%`;
            const li = el('li', {}, bar, el('span', { className: 'label' }, r.key), count);
            li.dataset['key'] = r.key;
            return li;
          })),
    );
  };
  list('live-pages', m.top_pages.map((p) => ({ key: p.path ?? '(none)', value: p.visitors })));
  list('live-sources', m.top_sources.map((s) => ({ key: s.source, value: s.visitors })));
  $('live-events')
    .querySelector('tbody')!
    .replaceChildren(...m.events.map((e) => el('tr', {}, el('td', {}, time(e.timestamp)), el('td', {}, e.event_name), el('td', {}, e.path ?? ''), el('td', {}, e.source), el('td', {}, e.country || '–'))));
  $('live-updated').textContent = `Updated ${time(m.at)} UTC`;
}

/** Reads the stream until it ends, the view is closed, or the key is refused; reconnects after a pause otherwise. */
async function connect(current: Api, signal: AbortController): Promise<void> {
  status('Connecting…', 'connecting');
  let wait = RECONNECT_MS;
  try {
    const res = await current.live(signal.signal);
    if (!res.ok || !res.body) {
      const code = ((await res.json().catch(() => ({}))) as { error?: string }).error ?? 'unknown_error';
      if (res.status === 429) {
        wait = Math.max(1, Number(res.headers.get('retry-after')) || 30) * 1000;
        status(`${describeError(res.status, code)} Live views of this project are all in use; trying again in ${Math.round(wait / 1000)} s.`, 'waiting');
      } else {
        status(describeError(res.status, code), 'closed');
        if (res.status === 401 || res.status === 403) return;
      }
    } else {
      status('Live: updated every 5 s', 'open');
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let rest = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const parsed = parseSse(rest + decoder.decode(value, { stream: true }));
        rest = parsed.rest;
        for (const item of parsed.items) {
          if ('comment' in item) continue;
          if (item.event === 'error') {
            const code = (JSON.parse(item.data) as { error: string }).error;
            status(describeError(401, code), 'closed');
            return;
          }
          renderLive(JSON.parse(item.data) as LiveMessage);
        }
      }
      status('The connection ended; reconnecting…', 'waiting');
    }
  } catch {
    if (signal.signal.aborted) return;
    status('The connection was lost; reconnecting…', 'waiting');
  }
  if (signal.signal.aborted || running !== signal) return;
  retryTimer = window.setTimeout(() => {
    if (running === signal && !signal.signal.aborted) void connect(current, signal);
  }, wait);
}

function open(): void {
  close();
  if (!api) return;
  $('live-view').hidden = false;
  $('live-toggle').setAttribute('aria-pressed', 'true');
  running = new AbortController();
  void connect(api, running);
}

/** Closes the stream (the Live button again, another key, leaving the dashboard). */
export function closeLive(): void {
  close();
  $('live-view').hidden = true;
  $('live-toggle').setAttribute('aria-pressed', 'false');
}

function close(): void {
  clearTimeout(retryTimer);
  running?.abort();
  running = undefined;
}

/** The Live button, once per page. */
export function setUpLive(): void {
  $('live-toggle').addEventListener('click', () => (running ? closeLive() : open()));
}

/** The key the dashboard reads with (and the Live button shown); an open live view reconnects with it. Undefined: hidden. */
export function useLiveApi(next: Api | undefined): void {
  const wasOpen = running !== undefined;
  api = next;
  $('live-toggle').hidden = next === undefined;
  if (next === undefined) closeLive();
  else if (wasOpen) open();
}
