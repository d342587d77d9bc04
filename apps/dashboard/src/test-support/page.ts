import { readFileSync } from 'node:fs';
import { type Browser, type Page, chromium } from 'playwright-core';
import { systemBinary } from '@analytics/testing';

// The dashboard as a person sees it in Chromium: what dashboard.spec.ts (against `npm start`) and the deploy checks'
// topology spec (through the production proxy) both read off the page. Test-only.

/** Debian's chromium; never a downloaded browser. CHROMIUM_PATH overrides it; the suites needing it skip loudly without it. */
export const CHROMIUM = systemBinary({ name: 'chromium', env: 'CHROMIUM_PATH', defaults: ['/usr/bin/chromium'], aptPackage: 'chromium' });

/** Headless Chromium (inside a `CHROMIUM.describe` suite). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM.path,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

/** The headline figures, by their data-testid (each the insights metric of that name). */
export const HEADLINE = ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'] as const;

/**
 * Records what should never happen on the page: console errors, page errors, failed requests, answers of 400 and
 * more, cookies, and requests to any other origin than `base`.
 */
export function watch(page: Page, base: string): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) problems.push(`other origin: ${r.url()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`answered ${r.status()}: ${r.url()}`);
    if (r.headers()['set-cookie']) problems.push(`cookie set by ${r.url()}`);
  });
  return problems;
}

/** Every panel of the view answered (or failed: `#load-error` says so). */
export const loaded = (page: Page, timeout = 30_000) => page.waitForSelector('body[data-state="loaded"]', { timeout });
/** The open funnel or retention view answered. */
export const viewLoaded = (page: Page, timeout = 30_000) => page.waitForSelector('#conversions[data-state="loaded"]', { timeout });

/** Opens `url` and signs in through the form with `key`, as a person does. */
export async function signIn(page: Page, url: string, key: string, timeout?: number): Promise<void> {
  await page.goto(url);
  await page.fill('#key-input', key);
  await page.press('#key-input', 'Enter');
  await loaded(page, timeout);
}

/** A headline figure as shown (its exact value, `data-value`). */
export const shown = (page: Page, testId: string) => page.getAttribute(`[data-testid="${testId}"]`, 'data-value').then(Number);

/** A top list as shown: [key, value] per bar, in order. */
export const listOf = (page: Page, id: string) =>
  page.$$eval(`#${id} li`, (items) => items.map((li) => [(li as HTMLElement).dataset['key'] ?? '', Number((li.querySelector('.count') as HTMLElement).dataset['value'])]));

export interface FunnelStepAnswer {
  index: number;
  count: number;
  conversion_rate: number;
  drop_off: number;
  median_time_to_convert_s: number | null;
}
export interface FunnelAnswer {
  steps: FunnelStepAnswer[];
  breakdown?: Array<{ value: string | null; steps: FunnelStepAnswer[] }>;
  notes?: string[];
}

/** The funnel's bars as shown: [index, count, rate, drop-off, median ('' for none)] per step. */
export const funnelOf = (page: Page) =>
  page.$$eval('#funnel-body .funnel li', (items) =>
    items.map((li) => {
      const v = (c: string) => (li.querySelector(c) as HTMLElement | null)?.dataset['value'];
      return [Number((li as HTMLElement).dataset['index']), Number(v('.count')), Number(v('.rate')), Number(v('.drop')), v('.median')];
    }),
  );
/** The same rows from the API's answer. */
export const funnelRows = (a: FunnelAnswer) => a.steps.map((s) => [s.index, s.count, s.conversion_rate, s.drop_off, s.median_time_to_convert_s === null ? '' : String(s.median_time_to_convert_s)]);

/** The retention grid as shown: [cohort, size, ...returned] per row. */
export const gridOf = (page: Page) =>
  page.$$eval('#retention-grid tbody tr', (rows) =>
    rows.map((tr) => [(tr as HTMLElement).dataset['cohort'], Number((tr.querySelector('.size') as HTMLElement).dataset['value']), ...[...tr.querySelectorAll('td.cell .count')].map((c) => Number((c as HTMLElement).dataset['value']))]),
  );

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is, each with the elements it names. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }> } }).axe.run();
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${JSON.stringify(v.nodes.map((n) => n.target))}`);
  });
}
