import type { Page } from 'playwright-core';
import { CHROMIUM, loaded, signIn, viewLoaded, watch } from './test-support/page';
import { useServedDashboard } from './test-support/service';

// Issue 50 item 6, the dashboard's details, in Chromium against the real service: a loading state that shows, the
// "Today" chart drawing in the day's first hour, country codes where no emoji font draws flags, durations on one line,
// no empty "Time" legend entry, a weekly cohort labelled within the range, breakdown options capitalized alike, and a
// headless browser's own visits explained in Recent events.
const HEADLESS_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
const DESKTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

CHROMIUM.describe('dashboard details (Chromium, the real service)', () => {
  const served = useServedDashboard('admin-token-details');

  const send = async (sk: string, events: object[], ua = DESKTOP_UA, ip = '81.2.69.160') => {
    const res = await fetch(`${served.base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', 'user-agent': ua, 'x-forwarded-for': ip }, body: JSON.stringify({ events }) });
    expect(res.status).toBe(202);
  };
  const project = async (name: string) => (await served.stores.keyStore.createProject({ name, allowed_origins: [] })).keys;
  const open = async (path: string, rk: string): Promise<{ page: Page; problems: string[] }> => {
    const page = await (await served.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems = watch(page, served.base);
    await signIn(page, `${served.base}${path}`, rk);
    return { page, problems };
  };


  it('dims the panels and says it is updating while a view loads, then shows every panel of the new filter together', async () => {
    const { sk, rk } = await project('loading');
    const now = Date.now();
    await send(sk, [
      { event: '$pageview', anonymous_id: 'a', timestamp: new Date(now - 3 * DAY).toISOString(), url: 'https://s.example/a?utm_source=news' },
      { event: '$pageview', anonymous_id: 'b', timestamp: new Date(now - 3 * DAY).toISOString(), url: 'https://s.example/b' },
    ]);
    const { page, problems } = await open('/', rk);
    expect(await page.isHidden('#updating')).toBe(true);
    // Hold the next view's answers: the page must show it is loading, and keep the old figures dimmed, not half-new.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/v1/insights', async (route) => {
      await held;
      await route.continue();
    });
    await page.click('#list-pages li[data-key="/a"] button');
    await page.waitForSelector('body[data-state="loading"]');
    expect(await page.isVisible('#updating')).toBe(true);
    expect(await page.$eval('#stat-visitors', (e) => Number(getComputedStyle(e).opacity))).toBeLessThan(1);
    // Nothing of the new filter is shown yet: both panels still hold the unfiltered numbers.
    expect(await page.getAttribute('[data-testid="visitors"]', 'data-value')).toBe('2');
    release();
    await loaded(page);
    expect(await page.isHidden('#updating')).toBe(true);
    expect(await page.getAttribute('[data-testid="visitors"]', 'data-value')).toBe('1');
    expect(await page.$$eval('#list-pages li', (li) => li.map((l) => (l as HTMLElement).dataset['key']))).toEqual(['/a']);
    expect(await page.$eval('#stat-visitors', (e) => getComputedStyle(e).opacity)).toBe('1');
    expect(problems).toEqual([]);
  });

  it('draws the Today chart from its first hour, shows country codes without an emoji font, keeps durations on one line and has no empty Time legend entry', async () => {
    const { sk, rk } = await project('today');
    const midnight = Math.floor(Date.now() / DAY) * DAY;
    // Two pageviews of one visit in today's first hour (GB by the address), 3 min 05 s apart.
    await send(sk, [
      { event: '$pageview', anonymous_id: 'v', session_id: 'v-1', timestamp: new Date(midnight + 60_000).toISOString(), url: 'https://s.example/' },
      { event: '$pageview', anonymous_id: 'v', session_id: 'v-1', timestamp: new Date(midnight + 60_000 + 185_000).toISOString(), url: 'https://s.example/next' },
    ]);
    const { page, problems } = await open(`/?from=${dayOf(midnight)}&to=${dayOf(midnight + DAY)}`, rk);
    // Hourly buckets, and the first hour's value is drawn as a point (a line needs two).
    const chart = await page.$eval('#chart', (el) => {
      const canvas = el.querySelector('canvas')!;
      const ctx = canvas.getContext('2d')!;
      const d = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let inked = 0;
      // The accent colours are not grey: count coloured pixels (axes and grid are grey).
      for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > 0 && (Math.abs(d[i]! - d[i + 2]!) > 40 || Math.abs(d[i + 1]! - d[i + 2]!) > 40)) inked++;
      return { inked, legend: [...el.querySelectorAll('.u-legend .u-series')].filter((s) => getComputedStyle(s).display !== 'none').map((s) => s.textContent!.trim()) };
    });
    expect(chart.inked).toBeGreaterThan(20);
    expect(chart.legend.some((l) => /^Time/.test(l))).toBe(false);
    expect(chart.legend).toEqual([expect.stringMatching(/^Visitors/), expect.stringMatching(/^Pageviews/)]);
    // Debian's chromium here has no emoji font: the code, not two boxed letters.
    const emoji = await page.evaluate(() => document.fonts.check('16px "Noto Color Emoji"'));
    const flag = await page.$eval('#list-countries li[data-key="GB"] .flag', (e) => e.textContent);
    if (!emoji) expect(flag).toBe('GB');
    expect(await page.textContent('#list-countries li[data-key="GB"] .label')).toContain('United Kingdom');
    // The duration does not wrap, even in a narrow window.
    await page.setViewportSize({ width: 360, height: 800 });
    const duration = await page.$eval('[data-testid="visit_duration"]', (e) => ({ text: e.textContent, lines: Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)) }));
    expect(duration).toEqual({ text: '3 min 05 s', lines: 1 });
    expect(problems).toEqual([]);
  });

  it('labels a weekly cohort that began before the range with the range\'s first day, and capitalizes every breakdown option', async () => {
    const { sk, rk } = await project('cohorts');
    // A Wednesday: its week began on the Monday before the range.
    const from = Date.UTC(2026, 5, 3);
    await send(sk, [
      { event: 'signup', anonymous_id: 'c1', user_id: 'u1', timestamp: new Date(from + 3_600_000).toISOString() },
      { event: 'signup', anonymous_id: 'c1', user_id: 'u1', timestamp: new Date(from + 8 * DAY).toISOString() },
    ]);
    const { page, problems } = await open(`/?from=${dayOf(from)}&to=${dayOf(from + 20 * DAY)}&view=retention&rp=week`, rk);
    await viewLoaded(page);
    const cohorts = await page.$$eval('#retention-body tbody tr', (rows) => rows.map((r) => [r.querySelector('th')!.textContent, (r as HTMLElement).dataset['cohort']]));
    expect(cohorts[0]).toEqual(['2026-06-03', '2026-06-01']);
    for (const [label] of cohorts) expect(label! >= '2026-06-03').toBe(true);
    const options = await page.$$eval('#funnel-breakdown option', (o) => o.map((x) => x.textContent!));
    expect(options.length).toBeGreaterThan(5);
    for (const option of options) expect([option, /^[A-Z]/.test(option)]).toEqual([option, true]);
    expect(problems).toEqual([]);
  });

  it("says in Recent events that a headless browser's visits are bots the figures leave out, instead of a silent 0", async () => {
    const { sk, rk } = await project('headless');
    const now = Date.now();
    await send(sk, [{ event: '$pageview', anonymous_id: 'h', timestamp: new Date(now - 60_000).toISOString(), url: 'https://s.example/' }], HEADLESS_UA);
    const { page, problems } = await open('/', rk);
    expect(await page.getAttribute('[data-testid="visitors"]', 'data-value')).toBe('0');
    expect(await page.isVisible('#recent-bots')).toBe(true);
    expect(await page.textContent('#recent-bots')).toMatch(/bots or automated browsers.*leave bots out/);
    expect(await page.$$eval('#recent tbody tr[data-bot="true"] .bot-badge', (b) => b.length)).toBe(1);
    expect(problems).toEqual([]);
  });
});
