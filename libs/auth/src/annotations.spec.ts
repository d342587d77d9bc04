import { ApiError } from '@analytics/schema';
import { ANNOTATIONS_PER_PROJECT, Annotations } from './annotations';
import { KeyStore } from './key-store';
import { migrateKeyStore } from './migrate';
import type { SqlPort } from './sql-port';
import { keyStoreBackends } from './test-backends';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const ms = (iso: string) => Date.parse(iso);
const ALL = { from: ms('2000-01-01T00:00:00Z'), to: ms('2100-01-01T00:00:00Z') };

describe.each(keyStoreBackends())('annotations on %s', (_name, open) => {
  let db: SqlPort;
  let keys: KeyStore;
  let annotations: Annotations;
  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    keys = new KeyStore(db);
    annotations = keys.annotations;
  });
  afterAll(() => db.close());

  it('adds, lists oldest first within [from, to), gets and deletes, scoped by project', async () => {
    const { project } = await keys.createProject({ name: 'a1' });
    const { project: other } = await keys.createProject({ name: 'a2' });
    const late = (await annotations.create(project.id, { at: ms('2026-03-05T12:00:00Z'), text: 'Deployed v2', kind: 'deploy', created_by: 'key:sk_live_abc' }))!;
    const early = (await annotations.create(project.id, { at: ms('2026-03-01T00:00:00Z'), text: 'Campaign', kind: 'campaign', created_by: null }))!;
    expect(late).toEqual({ id: expect.any(String), at: '2026-03-05T12:00:00.000Z', text: 'Deployed v2', kind: 'deploy', created_by: 'key:sk_live_abc', created_at: expect.any(String) });
    expect((await annotations.list(project.id, ALL)).annotations.map((a) => a.text)).toEqual(['Campaign', 'Deployed v2']);
    // [from, to): the start is in, the end is out.
    expect((await annotations.list(project.id, { from: ms('2026-03-01T00:00:00Z'), to: ms('2026-03-05T12:00:00Z') })).annotations.map((a) => a.id)).toEqual([early.id]);
    expect((await annotations.list(project.id, { from: ms('2026-03-01T00:00:01Z'), to: ms('2026-03-06T00:00:00Z') })).annotations.map((a) => a.id)).toEqual([late.id]);
    // Another project sees none of them, gets none and deletes none.
    expect(await annotations.list(other.id, ALL)).toEqual({ annotations: [] });
    expect(await annotations.get(other.id, late.id)).toBeUndefined();
    expect(await annotations.delete(other.id, late.id)).toBe(false);
    expect(await annotations.get(project.id, late.id)).toEqual(late);
    // A creator named: only its own.
    expect(await annotations.delete(project.id, late.id, 'key:sk_live_other')).toBe(false);
    expect(await annotations.delete(project.id, late.id, 'key:sk_live_abc')).toBe(true);
    expect(await annotations.delete(project.id, early.id)).toBe(true);
    expect(await annotations.list(project.id, ALL)).toEqual({ annotations: [] });
    // Ids that are no UUIDs, an unknown project: nothing, without a query failing.
    expect(await annotations.get(project.id, 'not-a-uuid')).toBeUndefined();
    expect(await annotations.delete('x', UNKNOWN)).toBe(false);
    expect(await annotations.list('x', ALL)).toEqual({ annotations: [] });
    expect(await annotations.create(UNKNOWN, { at: 0, text: 'x', kind: 'note', created_by: null })).toBeUndefined();
  });

  it('answers the oldest `listed` of a range with truncated: true when it holds more', async () => {
    const small = new Annotations(db, { perProject: 100, listed: 3 });
    const { project } = await keys.createProject({ name: 'a3' });
    for (let i = 0; i < 4; i++) await small.create(project.id, { at: ms('2026-01-01T00:00:00Z') + i * 60_000, text: `n${i}`, kind: 'note', created_by: null });
    expect(await small.list(project.id, ALL)).toEqual({ annotations: [expect.objectContaining({ text: 'n0' }), expect.objectContaining({ text: 'n1' }), expect.objectContaining({ text: 'n2' })], truncated: true });
    const { annotations: three, truncated } = await small.list(project.id, { from: ms('2026-01-01T00:01:00Z'), to: ALL.to });
    expect([three.map((a) => a.text), truncated]).toEqual([['n1', 'n2', 'n3'], undefined]);
  });

  it(`holds at most ${ANNOTATIONS_PER_PROJECT} per project: the next is 409 limit_reached`, async () => {
    const { project } = await keys.createProject({ name: 'a4' });
    const { project: other } = await keys.createProject({ name: 'a5' });
    await db.query(
      `INSERT INTO annotations (id, project_id, at, text, kind) SELECT gen_random_uuid()::text, $1, now(), 'n' || i, 'note' FROM generate_series(1, $2::int - 1) AS i`,
      [project.id, ANNOTATIONS_PER_PROJECT],
    );
    expect(await annotations.create(project.id, { at: 0, text: 'last', kind: 'note', created_by: null })).toBeDefined();
    const e = await annotations.create(project.id, { at: 0, text: 'one more', kind: 'note', created_by: null }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).toBody()).toMatchObject({ error: 'limit_reached', details: { limit: ANNOTATIONS_PER_PROJECT } });
    // Counted per project.
    expect(await annotations.create(other.id, { at: 0, text: 'x', kind: 'incident', created_by: null })).toBeDefined();
  });

  it('goes with its project', async () => {
    const { project } = await keys.createProject({ name: 'a6' });
    const a = (await annotations.create(project.id, { at: 0, text: 'x', kind: 'note', created_by: null }))!;
    await keys.deleteProject(project.id);
    const { rows } = await db.query('SELECT id FROM annotations WHERE id = $1', [a.id]);
    expect(rows).toEqual([]);
  });

  it('refuses a kind outside the four (the table checks it too)', async () => {
    const { project } = await keys.createProject({ name: 'a7' });
    await expect(db.query(`INSERT INTO annotations (id, project_id, at, text, kind) VALUES ($1, $2, now(), 'x', 'party')`, [UNKNOWN, project.id])).rejects.toThrow();
  });
});
