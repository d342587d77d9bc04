import { ApiError } from '@analytics/schema';
import { KeyStore } from './key-store';
import { migrateKeyStore } from './migrate';
import { SAVED_PER_KIND_LIMIT, SavedDefinitions } from './saved-definitions';
import type { SqlPort } from './sql-port';
import { keyStoreBackends } from './test-backends';

const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe.each(keyStoreBackends())('saved definitions on %s', (_name, open) => {
  let db: SqlPort;
  let keys: KeyStore;
  let saved: SavedDefinitions;
  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    keys = new KeyStore(db);
    saved = new SavedDefinitions(db);
  });
  afterAll(() => db.close());

  it('creates, lists, gets, renames, replaces and deletes, scoped by project and kind', async () => {
    const { project } = await keys.createProject({ name: 's1' });
    const { project: other } = await keys.createProject({ name: 's2' });
    const goal = (await saved.create(project.id, 'goal', { name: 'Signup', definition: { event: 'signup', filters: [] }, created_by: null }))!;
    expect(goal).toMatchObject({ project_id: project.id, kind: 'goal', name: 'Signup', definition: { event: 'signup', filters: [] } });
    expect(goal.created_at).toBe(goal.updated_at);
    expect((await saved.list(project.id, 'goal')).map((g) => g.id)).toEqual([goal.id]);
    // Another project, another kind: not found.
    expect(await saved.list(other.id, 'goal')).toEqual([]);
    expect(await saved.get(other.id, 'goal', goal.id)).toBeUndefined();
    expect(await saved.get(project.id, 'funnel', goal.id)).toBeUndefined();
    expect(await saved.update(other.id, 'goal', goal.id, { name: 'x' })).toBeUndefined();
    expect(await saved.delete(other.id, 'goal', goal.id)).toBe(false);
    // The same name in another kind or project is free.
    expect(await codeOf(saved.create(project.id, 'segment', { name: 'Signup', definition: { filters: [] } }))).toBe('ok');
    expect(await codeOf(saved.create(other.id, 'goal', { name: 'Signup', definition: { event: 'signup', filters: [] } }))).toBe('ok');
    const renamed = (await saved.update(project.id, 'goal', goal.id, { name: 'Signed up', definition: { path: '/welcome', filters: [] } }))!;
    expect(renamed).toMatchObject({ id: goal.id, name: 'Signed up', definition: { path: '/welcome', filters: [] } });
    expect(Date.parse(renamed.updated_at)).toBeGreaterThanOrEqual(Date.parse(goal.updated_at));
    // Keeping its own name is no conflict.
    expect(await codeOf(saved.update(project.id, 'goal', goal.id, { name: 'Signed up' }))).toBe('ok');
    expect(await saved.delete(project.id, 'goal', goal.id)).toBe(true);
    expect(await saved.get(project.id, 'goal', goal.id)).toBeUndefined();
  });

  it('answers 409 name_taken for a name the kind already has in the project (create and rename)', async () => {
    const { project } = await keys.createProject({ name: 's3' });
    await saved.create(project.id, 'funnel', { name: 'Checkout', definition: { steps: [] } });
    const other = (await saved.create(project.id, 'funnel', { name: 'Signup', definition: { steps: [] } }))!;
    const e = await saved.create(project.id, 'funnel', { name: 'Checkout', definition: { steps: [] } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).toBody()).toMatchObject({ error: 'name_taken', details: { kind: 'funnel', name: 'Checkout' } });
    expect(await codeOf(saved.update(project.id, 'funnel', other.id, { name: 'Checkout' }))).toBe('name_taken');
  });

  it(`holds at most ${SAVED_PER_KIND_LIMIT} of each kind per project: the next is 409 limit_reached`, async () => {
    const { project } = await keys.createProject({ name: 's4' });
    await db.query(
      `INSERT INTO saved_definitions (id, project_id, kind, name, definition) SELECT gen_random_uuid()::text, $1, 'segment', 'seg ' || i, '{"filters":[]}'::jsonb FROM generate_series(1, $2::int - 1) AS i`,
      [project.id, SAVED_PER_KIND_LIMIT],
    );
    expect(await codeOf(saved.create(project.id, 'segment', { name: 'last', definition: { filters: [] } }))).toBe('ok');
    const e = await saved.create(project.id, 'segment', { name: 'one more', definition: { filters: [] } }).catch((x: unknown) => x);
    expect((e as ApiError).toBody()).toMatchObject({ error: 'limit_reached', details: { kind: 'segment', limit: SAVED_PER_KIND_LIMIT } });
    // Other kinds are counted apart.
    expect(await codeOf(saved.create(project.id, 'goal', { name: 'one more', definition: { event: 'x', filters: [] } }))).toBe('ok');
    expect(await saved.list(project.id, 'segment')).toHaveLength(SAVED_PER_KIND_LIMIT);
  });

  it('resolves a segment of the project only; an unknown project or id is undefined', async () => {
    const { project } = await keys.createProject({ name: 's5' });
    const { project: other } = await keys.createProject({ name: 's6' });
    const filters = [['is', 'country', ['FR']]];
    const segment = (await saved.create(project.id, 'segment', { name: 'France', definition: { filters } }))!;
    expect(await saved.resolveSegment(project.id, segment.id)).toEqual({ id: segment.id, name: 'France', filters });
    expect(await saved.resolveSegment(other.id, segment.id)).toBeUndefined();
    expect(await saved.resolveSegment(project.id, UNKNOWN)).toBeUndefined();
    expect(await saved.resolveSegment(project.id, 'not-a-uuid')).toBeUndefined();
    expect(await saved.create(UNKNOWN, 'segment', { name: 'x', definition: { filters } })).toBeUndefined();
  });

  it('goes with its project', async () => {
    const { project } = await keys.createProject({ name: 's7' });
    const goal = (await saved.create(project.id, 'goal', { name: 'g', definition: { event: 'x', filters: [] } }))!;
    await keys.deleteProject(project.id);
    const { rows } = await db.query('SELECT id FROM saved_definitions WHERE id = $1', [goal.id]);
    expect(rows).toEqual([]);
  });
});
