import { DAY_MS, dayString, wallMs } from './state';
import { CHROMIUM, loaded, shown, signIn, watch } from './test-support/page';
import { useServedDashboard } from './test-support/service';

// Issue 47 items 2 and 3 on the dashboard, in Chromium against the real service: a project whose days are another
// zone's. "Today" and "Yesterday" are that zone's calendar days (local midnight to local midnight), their numbers the
// API's for the same local days and what was sent, and the change figures name the like-for-like range compared.
const DESKTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);

CHROMIUM.describe('dashboard days in the project time zone (Chromium, the real service)', () => {
  const served = useServedDashboard('admin-token-tz');

  const post = async <T>(path: string, key: string, body: unknown): Promise<T> => {
    const res = await fetch(`${served.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': DESKTOP_UA }, body: JSON.stringify(body) });
    expect(res.status).toBeLessThan(300);
    return (await res.json()) as T;
  };

  it.each(['Pacific/Kiritimati', 'Asia/Kolkata'])('%s: Today starts at local midnight, its numbers are the API’s for that local day, and the change says "vs yesterday until HH:MM"', async (zone) => {
    const created = await served.stores.keyStore.createProject({ name: `tz ${zone}`, allowed_origins: [] });
    const patch = { name: created.project.name, timezone: zone }; // timezone: the key store of issue 47 (h47-tz)
    await served.stores.keyStore.updateProject(created.project.id, patch);
    const now = Date.now();
    // Local midnight of today in the zone (neither zone has daylight saving time), as an instant.
    const wall = wallMs(now, zone);
    const todayWall = wall - (wall % DAY_MS);
    const midnight = todayWall - (wall - now);
    const elapsed = now - midnight;
    const at = (id: string, t: number) => ({ event: '$pageview', anonymous_id: id, timestamp: new Date(t).toISOString(), url: 'https://site.example/' });
    // Today (local): 3 visitors. Yesterday (local): 1 within the like-for-like cut (before yesterday's same clock time),
    // 1 ten seconds before local midnight (after the cut unless the clock is that close to midnight).
    await post('/v1/batch', created.keys.sk, {
      events: [at('t1', midnight + elapsed / 2), at('t2', midnight + 1000), at('t3', Math.max(midnight + 2000, now - 1000)), at('y1', midnight - DAY_MS + elapsed / 2), at('y2', midnight - 10_000)],
    });

    const context = await served.browser.newContext();
    const page = await context.newPage();
    const problems = watch(page, served.base);
    await signIn(page, `${served.base}/`, created.keys.rk);
    await page.click('[data-preset="today"]');
    await page.waitForURL((u) => u.search.includes(`from=${dayString(todayWall)}`));
    await loaded(page);
    // The local day, as the API reads date-only ranges for this project.
    expect(new URL(page.url()).searchParams.get('to')).toBe(dayString(todayWall + DAY_MS));
    expect(await page.getAttribute('[data-preset="today"]', 'aria-pressed')).toBe('true');
    const range = { from: dayString(todayWall), to: dayString(todayWall + DAY_MS) };
    const answer = await post<{ rows: Array<Record<string, unknown>>; compare_range?: { from: string; to: string } }>('/v1/insights', created.keys.rk, { ...range, metrics: ['visitors', 'pageviews'], compare: 'previous_period' });
    expect(await shown(page, 'visitors')).toBe(3);
    expect(await shown(page, 'visitors')).toBe(Number(answer.rows[0]!['visitors']));
    // The previous period: yesterday until the same local time (the API names it), 1 visitor of the 2.
    expect(answer.compare_range).toBeDefined();
    expect(Date.parse(answer.compare_range!.from)).toBe(midnight - DAY_MS);
    const change = page.locator('[data-testid="visitors"] + .change');
    expect(await change.getAttribute('data-previous')).toBe(String((answer.rows[0]!['comparison'] as Record<string, number>)['visitors']));
    expect(await change.getAttribute('data-previous')).toBe('1');
    // The page asked a moment before this test did: its cut may end a minute earlier.
    const label = (await change.textContent())!;
    expect(label).toMatch(/^\+200% vs yesterday until \d\d:\d\d$/);
    const cut = Date.parse(answer.compare_range!.to);
    expect([clock(wallMs(cut, zone)), clock(wallMs(cut - 60_000, zone))]).toContain(label.slice(-5));

    await page.click('[data-preset="yesterday"]');
    await page.waitForURL((u) => u.search.includes(`from=${dayString(todayWall - DAY_MS)}`));
    await loaded(page);
    expect(await shown(page, 'visitors')).toBe(2);
    // A range that has ended compares with the whole period before it.
    expect(await change.textContent()).toMatch(/vs previous period$|^nothing in the previous period$/);
    expect(problems).toEqual([]);
    await context.close();
  });
});
