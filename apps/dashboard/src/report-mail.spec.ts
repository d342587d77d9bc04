import type { Browser } from 'playwright-core';
import { type ReportContent, reportHtml } from '@analytics/runtime';
import { CHROMIUM, launchChromium } from './test-support/page';

// A report mail's HTML part as a mail client renders it (headless Chromium): nothing is fetched from anywhere (no
// remote image, font, sheet or script), and the key numbers, lists and links are on the page as text.

const CONTENT: ReportContent = {
  project: { id: 'p', name: 'Shop <Main>', timezone: 'Europe/Berlin' },
  frequency: 'weekly',
  period: { from: '2026-03-23', to: '2026-03-30' },
  previous: { from: '2026-03-16', to: '2026-03-23' },
  segment: null,
  figures: [
    { key: 'visitors', label: 'Visitors', value: 1234, previous: 1100, change: 134 / 1100 },
    { key: 'visits', label: 'Visits', value: 1500, previous: 1500, change: 0 },
    { key: 'pageviews', label: 'Pageviews', value: 4321, previous: 5000, change: -679 / 5000 },
    { key: 'bounce_rate', label: 'Bounce rate', value: 0.42, previous: 0.5, change: -0.16 },
    { key: 'visit_duration', label: 'Visit duration', value: 95, previous: 0, change: null },
  ],
  sources: [{ name: 'news.ycombinator.com', visitors: 800 }, { name: 'google', visitors: 300 }],
  pages: [{ path: '/pricing', pageviews: 2000 }],
  goals: [{ name: 'Signup', conversions: 57 }],
  annotations: [{ at: '2026-03-25T10:00:00.000Z', text: 'Launched pricing v2', kind: 'deploy' }],
  dashboardUrl: 'https://analytics.example.com/?from=2026-03-23&to=2026-03-30&compare=1',
};
const UNSUBSCRIBE = 'https://analytics.example.com/reports/unsubscribe/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

CHROMIUM.describe('a report mail rendered in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it('fetches nothing and shows the key numbers, the lists, the annotations and the links', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => void requested.push(r.url()));
    await page.setContent(reportHtml(CONTENT, UNSUBSCRIBE), { waitUntil: 'load' });
    const figure = async (key: string) => (await page.locator(`[data-metric="${key}"]`).innerText()).split('\n').map((s) => s.trim()).filter(Boolean);
    expect(await figure('visitors')).toEqual(['Visitors', '1,234', '+12%']);
    expect(await figure('pageviews')).toEqual(['Pageviews', '4,321', '-14%']);
    expect(await figure('bounce_rate')).toEqual(['Bounce rate', '42%', '-16%']);
    expect(await figure('visit_duration')).toEqual(['Visit duration', '1m 35s', 'new']);
    for (const key of ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration']) expect(await page.locator(`[data-metric="${key}"]`).isVisible()).toBe(true);
    const text = await page.locator('body').innerText();
    for (const shown of ['Weekly report for Shop <Main>', 'news.ycombinator.com', '800', '/pricing', 'Signup', '57', 'Launched pricing v2', 'Open the dashboard for this period', 'Unsubscribe']) expect(text).toContain(shown);
    expect(await page.locator('a', { hasText: 'Unsubscribe' }).getAttribute('href')).toBe(UNSUBSCRIBE);
    // Inline styles only, no image of any kind.
    expect(await page.locator('img, link, script, style, picture, svg').count()).toBe(0);
    expect(requested.filter((u) => !u.startsWith('about:') && !u.startsWith('data:'))).toEqual([]);
    await page.close();
  });
});
