import { wallClock } from '@analytics/schema';
import type { ReportContent, ReportFigure } from './content';

// A report as mail: HTML with inline styles only (mail clients drop <style> and external sheets) and no remote
// images (nothing loads from anywhere when it is opened: no tracking, nothing blocked), plus a text part.

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const integer = (n: number) => Math.round(n).toLocaleString('en-US');

/** A figure's value as shown: counts with separators, the bounce rate in percent, the duration in minutes and seconds. */
export function formatFigure(key: ReportFigure['key'], value: number): string {
  if (key === 'bounce_rate') return `${Math.round(value * 100)}%`;
  if (key === 'visit_duration') {
    const s = Math.round(value);
    return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
  }
  return integer(value);
}

/** The change against the period before: `+12%`, `-3%`, `0%`, or `new` when there was nothing before. */
export function formatChange(f: ReportFigure): string {
  if (f.change === null) return f.value === 0 ? '0%' : 'new';
  const pct = Math.round(f.change * 100);
  return `${pct > 0 ? '+' : ''}${pct}%`;
}

/** The last day of a period [from, to): the day before `to`. */
const lastDay = (to: string) => new Date(Date.parse(`${to}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
const pad = (n: number) => String(n).padStart(2, '0');
/** An instant (a preview's cut bound) as the zone's wall clock: `2026-03-25 14:05`. */
const localTime = (iso: string, tz: string) => {
  const w = wallClock(Date.parse(iso), tz);
  return `${w.y}-${pad(w.m)}-${pad(w.d)} ${pad(w.h)}:${pad(w.mi)}`;
};
/** A range as a report names it: whole local dates, or (a preview of the period in progress) until a local time. */
const rangeText = (r: { from: string; to: string }, tz: string) => (r.to.includes('T') ? `${r.from} to ${localTime(r.to, tz)}` : `${r.from} to ${lastDay(r.to)}`);
const periodText = (c: ReportContent) =>
  c.period.to.includes('T') ? `${rangeText(c.period, c.project.timezone)} (so far)` : c.frequency === 'weekly' ? rangeText(c.period, c.project.timezone) : c.period.from.slice(0, 7);
const previousText = (c: ReportContent) => rangeText(c.previous, c.project.timezone);

export function reportSubject(c: ReportContent, preview = false): string {
  return `${preview ? '[Preview] ' : ''}${c.frequency === 'weekly' ? 'Weekly' : 'Monthly'} report for ${c.project.name}: ${periodText(c)}`;
}

/** The text part. */
export function reportText(c: ReportContent, unsubscribeUrl: string): string {
  const lines = [
    `${c.frequency === 'weekly' ? 'Weekly' : 'Monthly'} report for ${c.project.name}`,
    `${periodText(c)} (${c.project.timezone}), compared with ${previousText(c)}${c.segment ? `, segment ${c.segment.name}` : ''}`,
    '',
    ...c.figures.map((f) => `${f.label}: ${formatFigure(f.key, f.value)} (${formatChange(f)})`),
  ];
  const list = (title: string, rows: string[]) => (rows.length ? ['', `${title}:`, ...rows.map((r, i) => `${i + 1}. ${r}`)] : ['', `${title}: none`]);
  lines.push(...list('Top sources', c.sources.map((s) => `${s.name}: ${integer(s.visitors)} visitors`)));
  lines.push(...list('Top pages', c.pages.map((p) => `${p.path}: ${integer(p.pageviews)} pageviews`)));
  lines.push(...list('Goals', c.goals.map((g) => `${g.name}: ${integer(g.conversions)} conversions`)));
  if (c.annotations) lines.push(...list('Annotations', c.annotations.map((a) => `${a.at.slice(0, 10)} [${a.kind}] ${a.text}`)));
  if (c.dashboardUrl) lines.push('', `Dashboard: ${c.dashboardUrl}`);
  lines.push('', `Unsubscribe from this report: ${unsubscribeUrl}`);
  return `${lines.join('\n')}\n`;
}

const FONT = "font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif";
const changeColor = (f: ReportFigure) => {
  if (f.change === null || f.change === 0) return '#555555';
  // A higher bounce rate is worse; every other figure is better higher.
  const better = f.key === 'bounce_rate' ? f.change < 0 : f.change > 0;
  return better ? '#127a3a' : '#b42318';
};

function table(title: string, head: [string, string], rows: Array<[string, string]>): string {
  const body = rows.length
    ? rows.map(([a, b]) => `<tr><td style="padding:4px 8px 4px 0;border-bottom:1px solid #eeeeee;word-break:break-all">${escapeHtml(a)}</td><td style="padding:4px 0;border-bottom:1px solid #eeeeee;text-align:right;white-space:nowrap">${escapeHtml(b)}</td></tr>`).join('')
    : `<tr><td colspan="2" style="padding:4px 0;color:#777777">None in this period</td></tr>`;
  return (
    `<h2 style="${FONT};font-size:16px;margin:24px 0 8px">${escapeHtml(title)}</h2>` +
    `<table role="presentation" style="${FONT};font-size:14px;width:100%;border-collapse:collapse"><tr><th style="text-align:left;color:#777777;font-weight:normal;padding:0 8px 4px 0">${escapeHtml(head[0])}</th><th style="text-align:right;color:#777777;font-weight:normal;padding:0 0 4px">${escapeHtml(head[1])}</th></tr>${body}</table>`
  );
}

/** The HTML part: one column, inline styles, no image, every figure as text. */
export function reportHtml(c: ReportContent, unsubscribeUrl: string): string {
  const figures = c.figures
    .map(
      (f) =>
        `<td style="padding:8px;border:1px solid #e5e5e5;vertical-align:top" data-metric="${f.key}"><div style="color:#777777;font-size:12px">${escapeHtml(f.label)}</div>` +
        `<div style="font-size:22px;font-weight:bold;margin:4px 0">${escapeHtml(formatFigure(f.key, f.value))}</div>` +
        `<div style="font-size:12px;color:${changeColor(f)}">${escapeHtml(formatChange(f))}</div></td>`,
    )
    .join('');
  const parts = [
    `<h1 style="${FONT};font-size:20px;margin:0 0 4px">${escapeHtml(`${c.frequency === 'weekly' ? 'Weekly' : 'Monthly'} report for ${c.project.name}`)}</h1>`,
    `<p style="${FONT};font-size:14px;color:#555555;margin:0 0 16px">${escapeHtml(`${periodText(c)} (${c.project.timezone}), compared with ${previousText(c)}`)}${c.segment ? escapeHtml(`, segment ${c.segment.name}`) : ''}</p>`,
    `<table role="presentation" style="${FONT};border-collapse:collapse;width:100%"><tr>${figures}</tr></table>`,
    table('Top sources', ['Source', 'Visitors'], c.sources.map((s) => [s.name, integer(s.visitors)])),
    table('Top pages', ['Page', 'Pageviews'], c.pages.map((p) => [p.path, integer(p.pageviews)])),
    table('Goals', ['Goal', 'Conversions'], c.goals.map((g) => [g.name, integer(g.conversions)])),
    ...(c.annotations ? [table('Annotations', ['Note', 'Date'], c.annotations.map((a) => [`[${a.kind}] ${a.text}`, a.at.slice(0, 10)]))] : []),
    ...(c.dashboardUrl ? [`<p style="${FONT};font-size:14px;margin:24px 0"><a href="${escapeHtml(c.dashboardUrl)}" style="color:#1f5fbf">Open the dashboard for this period</a></p>`] : []),
    `<p style="${FONT};font-size:12px;color:#777777;margin:24px 0 0">You receive this report because a project admin added you. <a href="${escapeHtml(unsubscribeUrl)}" style="color:#777777">Unsubscribe</a></p>`,
  ];
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(reportSubject(c))}</title></head><body style="margin:0;padding:16px;background:#ffffff;color:#111111"><div style="max-width:640px;margin:0 auto">${parts.join('')}</div></body></html>`;
}

/** The confirm and done pages of an unsubscribe link (GET shows a button that POSTs to the same address). */
export function unsubscribePageHtml(kind: 'confirm' | 'done', target: { project_name: string; frequency: string; email: string }): string {
  const what = `the ${target.frequency} report for ${target.project_name}`;
  const body =
    kind === 'confirm'
      ? `<p style="${FONT}">Stop sending ${escapeHtml(what)} to ${escapeHtml(target.email)}?</p><form method="post"><button type="submit" style="${FONT};font-size:16px;padding:8px 16px">Unsubscribe</button></form>`
      : `<p style="${FONT}">${escapeHtml(target.email)} no longer receives ${escapeHtml(what)}.</p>`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Unsubscribe</title></head><body style="margin:0;padding:24px">${body}</body></html>`;
}
