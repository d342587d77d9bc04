// Synthetic events for the read benchmarks, generated inside ClickHouse.
const DAY = 86_400_000;
const pick = (list, seed, key = 's') => `[${list.map((v) => `'${v}'`).join(',')}][cityHash64(${key}, ${seed}) % ${list.length} + 1]`;
const SOURCES = ['google/organic', 'google/paid', 'facebook/paid', 'facebook/social', 'direct/direct', 'newsletter/email', 'twitter/social', 'bing/organic', 'blog-example-org/referral', 'linkedin/paid', 'email/email', 'internal/direct'];
/**
 * INSERT ... SELECT FROM numbers(offset, rows) of synthetic events for one project, generated inside ClickHouse: run it
 * through `store.insertWith(rows, (seq, stamp) => store.command(syntheticEventsSql({ ..., seq, stamp })))` so the
 * aggregate builder folds it into the aggregates (a server's INSERT also carries the stamp's writer and row count).
 * `eventsPerSession` consecutive numbers make one session
 * (same visitor, entry source/medium, device, country), timestamps spread over `spanDays` days from `fromMs`. Its
 * session id is the server's form for a visit by inactivity, `<visitor id>-<30-minute bucket of its first event>`
 * (what the browser SDK's events get: it sends none), so a session that starts before midnight runs past it on one id.
 * Used by the read-path (read.mjs) and dashboard (dashboard.mjs) benchmarks.
 * Session start times: `totalRows` given (the size of the whole load), in the order of the numbers, spread evenly
 * over the span ("ordered": events arrive in time order, as live traffic does, so each INSERT covers a stretch of
 * days); otherwise hashed over the whole span ("scattered": every INSERT touches every day, like a bulk import of
 * shuffled history, the worst case for how many aggregate parts overlap a day).
 * `withProperties`: each event gets `{"plan": <one of 4, per visitor>, "step": <0..4>, "variant": <a|b>}` instead of
 * `{}` (the insights benchmark's prop:<key> cases; off by default so the other figures stay comparable).
 */
export const syntheticEventsSql = ({ db, projectId, fromMs, spanDays, eventsPerSession, offset, rows, seq, stamp, totalRows, withProperties = false }) => `
INSERT INTO ${db}.events (project_id, timestamp, event_id, event_name, anonymous_id, user_id, session_id, source, medium, campaign,
  source_confidence, source_rule_id, referrer, url, path, country, device_type, browser, os, ip_hash_hex, properties${seq === undefined ? '' : ', insert_seq_in'}${stamp ? ', insert_writer_in, insert_rows_in' : ''})
SELECT
  toUUID('${projectId}'),
  toDateTime64(${fromMs / 1000}, 3, 'UTC') + toIntervalMillisecond(${
    totalRows === undefined ? `cityHash64(s, 1) % ${spanDays * DAY}` : `intDiv(s * ${spanDays * DAY}, ${Math.ceil(totalRows / eventsPerSession)})`
  }) + toIntervalSecond((n % ${eventsPerSession}) * 45),
  toString(n),
  ['$pageview','$pageview','$pageview','$pageview','$pageview','$pageview','signup','purchase','clicked_pricing','feature_used'][cityHash64(n, 2) % 10 + 1],
  concat('anon-', toString(cityHash64(s, 3) % 400000)),
  NULL,
  concat('anon-', toString(cityHash64(s, 3) % 400000), '-', toString(intDiv(${fromMs} + ${
    totalRows === undefined ? `cityHash64(s, 1) % ${spanDays * DAY}` : `intDiv(s * ${spanDays * DAY}, ${Math.ceil(totalRows / eventsPerSession)})`
  }, 1800000))),
  splitByChar('/', src)[1],
  splitByChar('/', src)[2],
  NULL, 'high', 'bench', NULL, NULL,
  ${pick(['/', '/pricing', '/docs', '/blog/launch', '/signup', '/features', '/about', '/contact'], 4, 'n')},
  ${pick(['US', 'GB', 'DE', 'FR', 'JP', 'BR', 'IN', 'CA', 'AU', 'ES', 'IT', 'NL', 'SE', 'PL', 'MX', 'KR', 'CN', 'RU', 'ZA', ''], 5)},
  ${pick(['desktop', 'desktop', 'mobile', 'mobile', 'tablet', 'bot'], 6)},
  ${pick(['Chrome', 'Safari', 'Firefox', 'Edge', 'Mobile Safari', 'Samsung Internet'], 7)},
  ${pick(['Windows', 'macOS', 'iOS', 'Android', 'Linux', 'Chrome OS'], 8)},
  '00112233445566778899aabbccddeeff',
  ${withProperties ? `concat('{"plan":"', ${pick(['free', 'pro', 'team', 'enterprise'], 10)}, '","step":', toString(n % 5), ',"variant":"', ${pick(['a', 'b'], 11, 'n')}, '"}')` : "'{}'"}${seq === undefined ? '' : `,
  toUInt64(${seq})`}${stamp ? `, toUInt64(${stamp.writer}), toUInt32(${stamp.rows})` : ''}
FROM (SELECT number AS n, intDiv(number, ${eventsPerSession}) AS s, ${pick(SOURCES, 9)} AS src FROM numbers(${offset}, ${rows}))`;
