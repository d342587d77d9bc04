import type {
  LATEST_PROTOCOL_VERSION,
  McpUiInitializeRequest,
  McpUiInitializedNotification,
  McpUiResourceMeta,
  McpUiSizeChangedNotification,
  McpUiToolMeta,
  McpUiToolResultNotification,
  RESOURCE_MIME_TYPE,
} from '@modelcontextprotocol/ext-apps';

// MCP Apps (SEP-1865, @modelcontextprotocol/ext-apps): a tool names a ui:// resource, the host renders it in a
// sandboxed iframe and posts the tool result to it. The package's App class bundles to ~500 KB (SDK + zod), so the
// view speaks the four messages it needs itself; the names and version are typed against the package.

export const CHART_URI = 'ui://analytics/chart.html';
export const MCP_APP_MIME: typeof RESOURCE_MIME_TYPE = 'text/html;profile=mcp-app';
/** `_meta` of a tool whose result the chart renders (the nested key and the legacy flat one, as registerAppTool sets). */
export const CHART_TOOL_META: { ui: McpUiToolMeta; 'ui/resourceUri': string } = { ui: { resourceUri: CHART_URI }, 'ui/resourceUri': CHART_URI };
/** No external origins: the view loads nothing (empty CSP domains). */
export const CHART_RESOURCE_META: { ui: McpUiResourceMeta } = { ui: { prefersBorder: true, csp: { connectDomains: [], resourceDomains: [] } } };

const PROTOCOL: { version: typeof LATEST_PROTOCOL_VERSION; initialize: McpUiInitializeRequest['method']; initialized: McpUiInitializedNotification['method']; toolResult: McpUiToolResultNotification['method']; sizeChanged: McpUiSizeChangedNotification['method'] } = {
  version: '2026-01-26',
  initialize: 'ui/initialize',
  initialized: 'ui/notifications/initialized',
  toolResult: 'ui/notifications/tool-result',
  sizeChanged: 'ui/notifications/size-changed',
};
export type ViewProtocol = typeof PROTOCOL;

/** The few browser objects the view touches (the gateway compiles without DOM types; tests pass a stand-in). */
export interface ViewWindow {
  parent: { postMessage(message: unknown, targetOrigin: string): void };
  addEventListener(type: 'message', listener: (event: { data: unknown; source: unknown }) => void): void;
  document: { getElementById(id: string): { innerHTML: string } | null; documentElement: { scrollHeight: number } };
}

/**
 * The view's whole script, serialised into the page with Function#toString: it must reference only its parameters
 * and browser globals. Renders get_stats and top_sources results as horizontal bars in inline SVG.
 */
export function chartView(win: ViewWindow, protocol: ViewProtocol): void {
  type Row = Record<string, unknown>;
  type Result = { isError?: boolean; structuredContent?: Row; content?: Array<{ type: string; text?: string }> };
  const initId = 1;
  const send = (message: Row) => win.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const root = () => win.document.getElementById('root');

  const bars = (title: string, items: Array<{ label: string; value: number; note?: string }>) => {
    const shown = items.slice(0, 50);
    const max = Math.max(1, ...shown.map((i) => i.value));
    const rowH = 24;
    const body = shown
      .map((item, n) => {
        const y = n * rowH;
        const w = Math.max(1, (item.value / max) * 55);
        return `<g transform="translate(0,${y})"><title>${esc(item.label)}: ${esc(item.value)}${item.note ? ` (${esc(item.note)})` : ''}</title>`
          + `<text x="0" y="16" class="l">${esc(item.label.length > 32 ? `${item.label.slice(0, 31)}…` : item.label)}</text>`
          + `<rect x="35%" y="4" width="${w}%" height="16" rx="2" class="b"></rect>`
          + `<text x="${35 + w + 1}%" y="16" class="v">${esc(item.value.toLocaleString())}${item.note ? ` · ${esc(item.note)}` : ''}</text></g>`;
      })
      .join('');
    const more = items.length > shown.length ? `<p class="m">${items.length - shown.length} more rows not drawn</p>` : '';
    return `<h1>${esc(title)}</h1>${shown.length === 0 ? '<p class="m">No rows in this range.</p>' : `<svg width="100%" height="${shown.length * rowH}" role="img" aria-label="${esc(title)}">${body}</svg>`}${more}`;
  };

  const render = (result: Result) => {
    const sc = result.structuredContent;
    let html: string;
    if (result.isError || !sc || !Array.isArray(sc.rows)) {
      html = `<p class="m">${esc(result.content?.find((c) => c.type === 'text')?.text ?? 'Nothing to draw.')}</p>`;
    } else if ('breakdown' in sc) {
      const rows = sc.rows as Row[];
      html = bars('Top sources (events)', rows.map((r) => ({
        label: r.medium === undefined ? String(r.source) : `${String(r.source)} / ${String(r.medium)}`,
        value: Number(r.events),
        note: `${Number(r.uniques).toLocaleString()} uniques${Number(r.paid_share) > 0 ? `, ${Math.round(Number(r.paid_share) * 100)}% paid` : ''}`,
      })));
    } else {
      const rows = sc.rows as Row[];
      html = bars(sc.metric === 'uniques' ? 'Unique visitors' : 'Events', rows.map((r) => {
        const label = Object.keys(r).filter((k) => k !== 'value').map((k) => (r[k] === null ? '(none)' : String(r[k]))).join(' · ');
        return { label: label || 'all', value: Number(r.value) };
      }));
    }
    if (sc?.truncated) html += '<p class="m">Rows were cut to fit the result size cap.</p>';
    const el = root();
    if (el) el.innerHTML = html;
    send({ method: protocol.sizeChanged, params: { height: win.document.documentElement.scrollHeight } });
  };

  win.addEventListener('message', (event) => {
    if (event.source !== win.parent) return;
    const m = event.data as Row | null;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.id === initId && 'result' in m) send({ method: protocol.initialized, params: {} });
    else if (m.method === protocol.toolResult) render(m.params as Result);
  });
  send({ id: initId, method: protocol.initialize, params: { appInfo: { name: 'analytics-chart', version: '1.0.0' }, appCapabilities: {}, protocolVersion: protocol.version } });
}

const STYLE = [
  'body{margin:0;padding:12px;font:13px system-ui,sans-serif;color:var(--color-text-primary,#1f2328);background:transparent}',
  'h1{font-size:14px;margin:0 0 8px}.l{fill:currentColor}.v{fill:currentColor;opacity:.75}.b{fill:var(--color-text-info,#3b6fd8)}.m{opacity:.7}',
].join('');

/** The chart page: one inline style, one inline script, no external request. */
export const CHART_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Analytics chart</title><style>${STYLE}</style></head>`
  + `<body><div id="root"><p class="m">Waiting for the tool result…</p></div><script>(${chartView.toString()})(window, ${JSON.stringify(PROTOCOL)});</script></body></html>`;
