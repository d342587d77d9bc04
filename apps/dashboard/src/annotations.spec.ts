import { DAY_MS, wallMs } from './state';
import { CHROMIUM, axeViolations, loaded, signIn, watch } from './test-support/page';
import { useServedDashboard } from './test-support/service';

// Issue 48 on the dashboard, in Chromium against the real service: the project's annotations drawn on the main chart
// at their buckets (the project's days, Asia/Kolkata here), their text on hover, listed under the chart; read with an
// rk_ key the page offers no form (editors add them signed in; a share link reads as a key does).
CHROMIUM.describe('annotations on the chart (Chromium, the real service)', () => {
  const served = useServedDashboard('admin-token-annotations');

  it('draws a marker at the bucket of each annotated day, shows its text on hover, and lists them read-only (a share link too)', async () => {
    const zone = 'Asia/Kolkata';
    const created = await served.stores.keyStore.createProject({ name: 'annotated', allowed_origins: [], timezone: zone });
    const now = Date.now();
    const todayWall = wallMs(now, zone) - (wallMs(now, zone) % DAY_MS);
    // 02:00 in Kolkata two days ago is still the day before in UTC (20:30): the marker goes by the project's day.
    const early = todayWall - 2 * DAY_MS + 2 * 3_600_000 - (wallMs(now, zone) - now);
    const post = async (body: object) => {
      const res = await fetch(`${served.base}/v1/annotations`, { method: 'POST', headers: { authorization: `Bearer ${created.keys.sk}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(201);
    };
    await post({ at: new Date(early).toISOString(), text: 'Deployed v2.4.0', kind: 'deploy' });
    await post({ at: new Date(now - 60_000).toISOString(), text: 'Newsletter sent', kind: 'campaign' });
    const sent = await fetch(`${served.base}/v1/track`, { method: 'POST', headers: { authorization: `Bearer ${created.keys.sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ event: '$pageview', anonymous_id: 'v1', url: 'https://site.example/' }) });
    expect(sent.status).toBe(202);

    const context = await served.browser.newContext();
    const page = await context.newPage();
    const problems = watch(page, served.base);
    await signIn(page, `${served.base}/`, created.keys.rk);
    const markers = page.locator('#chart .annotation-marker');
    await markers.first().waitFor();
    expect(await markers.evaluateAll((flags) => flags.map((f) => Number((f as HTMLElement).dataset['bucket'])))).toEqual([todayWall - 2 * DAY_MS, todayWall]);
    // Drawn over the plot, at distinct places, left to right.
    const lefts = await markers.evaluateAll((flags) => flags.map((f) => f.getBoundingClientRect().left));
    expect(lefts[0]!).toBeLessThan(lefts[1]!);
    expect(await markers.first().getAttribute('title')).toContain('Deploy: Deployed v2.4.0');
    await markers.first().hover();
    const tip = page.locator('#chart .annotation-tip');
    await tip.waitFor({ state: 'visible' });
    expect(await tip.textContent()).toMatch(/ 02:00 Asia\/Kolkata · Deploy: Deployed v2\.4\.0$/);
    await markers.nth(1).hover();
    expect(await tip.textContent()).toContain('Campaign: Newsletter sent');
    // Listed under the chart, oldest first; no form for a read key.
    expect(await page.locator('#annotation-list li .annotation-text').allTextContents()).toEqual(['Deployed v2.4.0', 'Newsletter sent']);
    expect(await page.isVisible('#annotation-form')).toBe(false);
    expect(await page.locator('#annotation-list button').count()).toBe(0);
    // A share link's page draws the same markers, read-only.
    const share = await fetch(`${served.base}/admin/projects/${created.project.id}/shares`, { method: 'POST', headers: { authorization: 'Bearer admin-token-annotations', 'content-type': 'application/json' }, body: '{}' });
    expect(share.status).toBe(201);
    await page.goto(((await share.json()) as { url: string }).url.replace(/^https?:\/\/[^/]+/, served.base));
    await loaded(page);
    await markers.first().waitFor();
    expect(await markers.count()).toBe(2);
    expect(await page.isVisible('#annotation-form')).toBe(false);
    expect(await page.locator('#annotation-list li').count()).toBe(2);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an editor (here the owner, signed in) adds one from the chart, a click on a bucket giving its time, and deletes it', async () => {
    // The first run's owner: the organization adopts the project made above.
    const owner = { email: 'owner@example.com', password: 'owner passphrase 1' };
    const setup = await fetch(`${served.base}/auth/setup`, { method: 'POST', headers: { authorization: 'Bearer admin-token-annotations', 'content-type': 'application/json' }, body: JSON.stringify(owner) });
    expect(setup.status).toBe(201);
    const context = await served.browser.newContext();
    const page = await context.newPage();
    const problems = watch(page, served.base);
    await page.goto(`${served.base}/`);
    await page.fill('#login-email', owner.email);
    await page.fill('#login-password', owner.password);
    await page.press('#login-password', 'Enter');
    await loaded(page);
    await page.locator('#annotation-form').waitFor({ state: 'visible' });
    const markers = page.locator('#chart .annotation-marker');
    await markers.first().waitFor();
    const before = await markers.count();
    // The markers, the list and the form: no serious or critical axe violation, dark and light.
    for (const colorScheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme });
      expect({ colorScheme, violations: await axeViolations(page) }).toEqual({ colorScheme, violations: [] });
    }
    // A click on the plot left of the first marker (an earlier day): the form takes that day's start.
    const box = (await page.locator('#chart .u-over').boundingBox())!;
    await page.mouse.move(box.x + 4, box.y + box.height / 2);
    await page.mouse.click(box.x + 4, box.y + box.height / 2);
    const at = await page.inputValue('#annotation-at');
    expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T00:00$/);
    await page.fill('#annotation-text', 'Outage of the checkout');
    await page.selectOption('#annotation-kind', 'incident');
    await page.click('#annotation-form button[type="submit"]');
    await page.waitForFunction((n) => document.querySelectorAll('#chart .annotation-marker').length === n + 1, before);
    expect(await page.locator('#chart .annotation-marker.kind-incident').getAttribute('title')).toContain(`${at.replace('T', ' ')} Asia/Kolkata · Incident: Outage of the checkout`);
    const row = page.locator('#annotation-list li', { hasText: 'Outage of the checkout' });
    await row.locator('button').click();
    await row.locator('button').click();
    await page.waitForFunction((n) => document.querySelectorAll('#chart .annotation-marker').length === n, before);
    expect(await page.locator('#annotation-list .annotation-text').allTextContents()).toEqual(['Deployed v2.4.0', 'Newsletter sent']);
    expect(problems).toEqual([]);
    await context.close();
  });
});
