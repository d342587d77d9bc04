import { randomBytes, randomUUID } from 'node:crypto';
import { channelOf, classify } from '@analytics/classifier';
import { EVENT_INSERT_COLUMNS, type EventRow, type StatsParams } from '@analytics/schema';
import type { EventStore } from '../event-store';
import { eventStoreMigrations, migrateEventStore } from './migrate';
import { queryStats } from '../queries/stats.query';
import { useTestStore } from '../test-support/test-store';
import { testRow } from '../test-support/test-rows';

// Real chDB (one data path per process: closed in afterAll).
let store: EventStore;
useTestStore((opened) => ({ store } = opened));

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 2);
const PAGE = 'https://shop.example.com/pricing';

/** Inputs whose channel the migration's DEFAULT knows as channelOf does: one per channel and per rule it reads. */
const INPUTS: { url: string; referrer?: string }[] = [
  { url: PAGE },
  { url: PAGE, referrer: 'https://shop.example.com/' },
  { url: `${PAGE}?gclid=abc`, referrer: 'https://www.google.com/' },
  { url: `${PAGE}?utm_source=google&utm_medium=cpc` },
  { url: `${PAGE}?utm_source=facebook&utm_medium=paid_social` },
  { url: `${PAGE}?fbclid=x`, referrer: 'https://l.facebook.com/' },
  { url: `${PAGE}?utm_source=taboola&utm_medium=cpm` },
  { url: `${PAGE}?utm_source=chatgpt.com` },
  { url: PAGE, referrer: 'https://chatgpt.com/' },
  { url: PAGE, referrer: 'https://www.perplexity.ai/search?q=x' },
  { url: PAGE, referrer: 'https://gemini.google.com/app' },
  { url: PAGE, referrer: 'https://claude.ai/chat/1' },
  { url: PAGE, referrer: 'https://www.google.com/' },
  { url: PAGE, referrer: 'https://duckduckgo.com/' },
  { url: PAGE, referrer: 'https://t.co/abc' },
  { url: PAGE, referrer: 'https://www.reddit.com/r/x' },
  { url: PAGE, referrer: 'https://mail.google.com/' },
  { url: `${PAGE}?utm_source=newsletter&utm_medium=email` },
  { url: `${PAGE}?utm_source=mastodon&utm_medium=social` },
  { url: `${PAGE}?utm_source=partner&utm_medium=seo` },
  { url: `${PAGE}?utm_source=partner&utm_medium=affiliate` },
  { url: `${PAGE}?utm_source=partner` },
  { url: PAGE, referrer: 'https://news.ycombinator.com/item?id=1' },
  { url: PAGE, referrer: 'https://blog.example.org/post' },
];

describe('channel', () => {
  it('of rows stored before migration 008 is what channelOf gives, through the DEFAULT the migration adds', async () => {
    const db = `t_${randomBytes(6).toString('hex')}`;
    const P = randomUUID();
    try {
      const migrations = eventStoreMigrations('server');
      await migrateEventStore(store.client, { db }, migrations.slice(0, 7));
      const rows = INPUTS.map((input, i) => {
        const c = classify(input);
        const r = testRow(P, { at: T0 + i, event_id: `old-${i}`, url: input.url, referrer: input.referrer ?? null, source: c.source, medium: c.medium, source_rule_id: c.rule_id });
        const { channel: _dropped, ...before008 } = r;
        return before008;
      });
      const columns = EVENT_INSERT_COLUMNS.filter((c) => c !== 'channel');
      await store.client.insert({ table: `${db}.events`, values: rows, format: 'JSONEachRow', columns: columns as [string, ...string[]] });
      expect(await migrateEventStore(store.client, { db }, migrations.filter((m) => m.version <= 8))).toEqual([8]);
      const stored = await store.select<{ event_id: string; channel: string }>(`SELECT event_id, channel FROM ${db}.events WHERE project_id = {p:UUID} ORDER BY timestamp`, { p: P });
      const got = stored.map((r) => ({ input: INPUTS[Number(r.event_id.slice(4))], channel: r.channel }));
      expect(got).toEqual(INPUTS.map((input) => ({ input, channel: channelOf(classify(input), input) })));
      // and every channel is among them, so the DEFAULT was checked for each
      expect(new Set(got.map((g) => g.channel)).size).toBe(10);
    } finally {
      await store.command(`DROP DATABASE IF EXISTS ${db}`);
    }
  });

  it('groups /v1/stats by channel from the raw events, alone and with another column', async () => {
    const P = randomUUID();
    const rows: EventRow[] = [
      testRow(P, { at: T0 + 1000, anonymous_id: 'a', channel: 'ai_assistant', device_type: 'desktop' }),
      testRow(P, { at: T0 + 2000, anonymous_id: 'b', channel: 'ai_assistant', device_type: 'mobile' }),
      testRow(P, { at: T0 + 3000, anonymous_id: 'a', channel: 'organic_search', device_type: 'desktop' }),
      testRow(P, { at: T0 + 8 * DAY, anonymous_id: 'c', channel: 'email' }),
    ];
    await store.insertRows(rows);
    const stats = (o: Partial<StatsParams>) => queryStats(store, P, { from: T0, to: T0 + 7 * DAY, metric: 'count', limit: 100, ...o });
    expect(await stats({ group_by: ['channel'] })).toEqual({ metric: 'count', rows: [{ channel: 'ai_assistant', value: 2 }, { channel: 'organic_search', value: 1 }] });
    expect(await stats({ group_by: ['channel', 'device_type'], metric: 'uniques' })).toEqual({
      metric: 'uniques',
      rows: [
        { channel: 'ai_assistant', device_type: 'desktop', value: 1 },
        { channel: 'ai_assistant', device_type: 'mobile', value: 1 },
        { channel: 'organic_search', device_type: 'desktop', value: 1 },
      ],
    });
  });
});
