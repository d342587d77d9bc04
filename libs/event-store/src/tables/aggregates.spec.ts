import { AGGREGATES, type Aggregate, aggregateOf, aggregateSelect } from './aggregates';
import { readMigrationFile } from '../test-support/migration-file';

const normalized = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** The SELECT of each materialized view a migration creates, by the table it fills (`${...}` placeholders as written). */
function viewSelects(sql: string): Map<string, string> {
  const views = new Map<string, string>();
  for (const m of sql.matchAll(/CREATE MATERIALIZED VIEW IF NOT EXISTS \$\{db\}\.(\w+)_mv [^\n]* AS\n([^;]*);/g)) views.set(m[1]!, normalized(m[2]!));
  return views;
}

// The views of 002/003 still build the aggregates on a ClickHouse server: they and the builder must fold events alike.
describe.each([
  ['unclustered', '${db}.events'],
  ['clustered', '${db}.events_local'],
])('aggregates.ts against the applied migrations (%s)', (mode, events) => {
  const views = new Map([...viewSelects(readMigrationFile(`${mode}/002_aggregates.sql`)), ...viewSelects(readMigrationFile(`${mode}/003_daily_uniques.sql`))]);

  it('finds the three views of migrations 002 and 003', () => {
    expect([...views.keys()].sort()).toEqual(['daily_rollup', 'daily_uniques', 'sessions']);
  });

  it.each(['daily_rollup', 'daily_uniques', 'sessions'] as const)("renders the %s view's SELECT exactly", (table) => {
    expect(aggregateSelect(aggregateOf(table), events)).toBe(views.get(table));
  });

  it("renders migration 003's backfill of daily_uniques exactly", () => {
    const backfill = /INSERT INTO \$\{db\}\.daily_uniques \([^)]*\)\n(SELECT[^;]*?)\nSETTINGS/.exec(readMigrationFile(`${mode}/003_daily_uniques.sql`));
    expect(aggregateSelect(aggregateOf('daily_uniques'), '${db}.events')).toBe(normalized(backfill![1]!));
  });
});

describe('AGGREGATES', () => {
  it('fills every column it names, in order, one SELECT item each', () => {
    const names = (a: Aggregate) => a.select.map((item) => /(?: AS )?(\w+)$/.exec(item)![1]);
    for (const a of AGGREGATES.filter((x) => x.table !== 'daily_uniques_by')) expect(names(a)).toEqual(a.columns);
    // daily_uniques_by's grain columns are renamed in its SELECT (t.1 AS by_event ...): the positions match all the same
    expect(aggregateOf('daily_uniques_by').select).toHaveLength(aggregateOf('daily_uniques_by').columns.length);
  });
});
