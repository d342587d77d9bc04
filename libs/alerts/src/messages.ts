import type { AlertChannel, AlertDefinition, AlertDeliveryKind } from '@analytics/schema';
import type { ChannelMessage } from './channels';
import { type AlertProject, type Contributor, round } from './evaluate';

/** What one message of an alert says: its facts, as the webhook's JSON carries them and the texts word them. */
export interface AlertFacts {
  alert: { id: string; name: string };
  project: AlertProject;
  definition: AlertDefinition;
  kind: AlertDeliveryKind;
  value: number | null;
  /** The expected value (anomaly) or the reference (a threshold's week before); null for a test. */
  expected: number | null;
  threshold: number | null;
  /** The end of the window (ISO 8601). */
  at: string;
  contributors: Contributor[];
  dashboardUrl: string | null;
}

const WINDOW_TEXT = { '1h': 'the last hour', '1d': 'the last 24 hours' } as const;
const STATE = { fired: 'firing', recovered: 'recovered', test: 'test' } as const;
const number = (n: number) => new Intl.NumberFormat('en', { maximumFractionDigits: 1 }).format(n);

/** "pageviews +340%" (or "pageviews up from 0"); without an expected value, the metric alone. */
export function movement(metric: string, value: number, expected: number | null): string {
  if (expected === null) return metric;
  if (expected === 0) return value === 0 ? `${metric} unchanged` : `${metric} up from 0`;
  const pct = Math.round((100 * (value - expected)) / expected);
  return `${metric} ${pct >= 0 ? '+' : ''}${pct}%`;
}

/** The one-line summary: what moved, how much, against what, and who brought most of it. */
export function headline(f: AlertFacts): string {
  const def = f.definition;
  const what = def.event !== undefined ? `${def.metric} (${def.event})` : def.metric;
  if (f.kind === 'test') return `Test message of the alert "${f.alert.name}" (${what} in ${WINDOW_TEXT[def.window]}): this channel receives its messages.`;
  const value = f.value ?? 0;
  const against =
    'anomaly' in def.condition
      ? `expected ${number(f.expected ?? 0)}, ${f.kind === 'fired' ? 'alert beyond' : 'bound'} ${number(f.threshold ?? 0)}`
      : `${'above' in def.condition ? 'above' : 'below'} threshold ${number(f.threshold ?? 0)}`;
  const head = `${f.kind === 'recovered' ? 'Recovered: ' : ''}${movement(what, value, f.expected)}: ${number(value)} in ${WINDOW_TEXT[def.window]} (${against})`;
  const top = f.contributors[0];
  if (!top || f.expected === null || value === f.expected) return head;
  return `${head}; ${top.value} (${top.dimension}) brought ${Math.round(top.share * 100)}% of the ${value > f.expected ? 'increase' : 'decrease'}`;
}

/** The contributors as text lines. */
const contributorLines = (f: AlertFacts) => f.contributors.map((c) => `- ${c.dimension} ${c.value}: ${number(c.current)} (expected ${number(c.expected)}, ${c.change >= 0 ? '+' : ''}${number(c.change)}, ${Math.round(c.share * 100)}% of the change)`);

/** Slack's mrkdwn reads <, > and & as markup: escaped as its docs say. */
const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The webhook's JSON body (docs/alerts-and-reports.md): made once per delivery, so a retry sends the same bytes and signature. */
export function webhookBody(f: AlertFacts): string {
  return JSON.stringify({
    alert: f.alert,
    project: { id: f.project.id, name: f.project.name },
    state: STATE[f.kind],
    metric: f.definition.metric,
    ...(f.definition.event !== undefined ? { event: f.definition.event } : {}),
    value: f.value === null ? null : round(f.value),
    expected: f.expected === null ? null : round(f.expected),
    threshold: f.threshold === null ? null : round(f.threshold),
    window: f.definition.window,
    at: f.at,
    contributors: f.contributors,
    dashboard_url: f.dashboardUrl,
    text: headline(f),
  });
}

/** The message of each channel of an alert. */
export function channelMessages(channels: readonly AlertChannel[], f: AlertFacts): ChannelMessage[] {
  const line = headline(f);
  const details = contributorLines(f);
  const text = [line, '', ...(details.length > 0 ? ['Largest contributors:', ...details, ''] : []), ...(f.dashboardUrl ? [`Dashboard: ${f.dashboardUrl}`] : []), `Alert: ${f.alert.name} (project ${f.project.name})`].join('\n');
  const html = [
    '<div style="font-family:system-ui,sans-serif;font-size:14px;color:#111">',
    `<p style="font-size:16px;font-weight:600">${escape(line)}</p>`,
    details.length > 0 ? `<p>Largest contributors:</p><ul>${f.contributors.map((c, i) => `<li>${escape(details[i]!.slice(2))}</li>`).join('')}</ul>` : '',
    f.dashboardUrl ? `<p><a href="${escape(f.dashboardUrl)}">Open the dashboard</a></p>` : '',
    `<p style="color:#666">Alert ${escape(f.alert.name)}, project ${escape(f.project.name)}</p>`,
    '</div>',
  ].join('');
  const subject = `[${f.project.name}] ${f.kind === 'test' ? 'Test: ' : ''}${f.alert.name}: ${f.kind === 'test' ? 'test message' : line}`.slice(0, 250);
  return channels.map((c): ChannelMessage => {
    if ('email' in c) return { email: { to: c.email, subject, text, html } };
    if ('webhook' in c) return { webhook: { url: c.webhook.url, secret: c.webhook.secret, body: webhookBody(f) } };
    return { slack: { webhook_url: c.slack.webhook_url, body: JSON.stringify({ text: slackEscape([line, ...details, ...(f.dashboardUrl ? [f.dashboardUrl] : [])].join('\n')) }) } };
  });
}

/** The dashboard's address for the window (the days it covers), or null without PUBLIC_URL. */
export function dashboardUrlOf(publicUrl: string | undefined, from: number, to: number): string | null {
  if (!publicUrl) return null;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return `${publicUrl.replace(/\/$/, '')}/?from=${day(from)}&to=${day(to + 86_400_000 - 1)}`;
}
