import request from 'supertest';
import { memoryPglitePort } from '@analytics/auth/testing';
import { SAVED_LIMITS } from '@analytics/schema';
import { ADMIN_TOKEN, type People, setUpPeople } from './test-people';

// The saved goals, funnels and segments of a project through the admin routes (docs/saved-and-shared.md). Who may
// call each route is roles.spec.ts's table; here: what they answer.

describe('saved goals, funnels and segments (admin routes)', () => {
  let p: People;
  let editor: string;
  let viewer: string;
  beforeAll(async () => {
    p = await setUpPeople(await memoryPglitePort());
    editor = `Bearer ${await p.tokenOf('editor')}`;
    viewer = `Bearer ${await p.tokenOf('viewer')}`;
  }, 120_000);
  afterAll(() => p.db.close());

  const post = (kind: string, body: object, as = editor) => request(p.app).post(`/admin/projects/${p.projectId}/${kind}`).set('authorization', as).send(body);
  const patch = (kind: string, id: string, body: object) => request(p.app).patch(`/admin/projects/${p.projectId}/${kind}/${id}`).set('authorization', editor).send(body);

  it('saves a goal in its canonical form, lists it for a viewer and answers it with id, name and times', async () => {
    const res = await post('goals', { name: '  Blog reader ', path: '/blog/*', filters: [['is', 'country', ['FR']]] });
    expect(res.status).toBe(201);
    const goal = res.body.goal;
    expect(goal).toEqual({ id: expect.any(String), name: 'Blog reader', path: '/blog/*', filters: [['is', 'country', ['FR']]], created_at: expect.any(String), updated_at: goal.created_at });
    const list = await request(p.app).get(`/admin/projects/${p.projectId}/goals`).set('authorization', viewer);
    expect(list.status).toBe(200);
    expect(list.body.goals).toContainEqual(goal);
  });

  it('checks a goal as /v1/insights does: an event or a path, valid filters; names of 1 to 100 characters', async () => {
    const none = await post('goals', { name: 'empty' });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('invalid_payload');
    expect(none.body.details.issues).toContainEqual({ path: '', message: 'a goal names an event, a path, or both' });
    const badFilter = await post('goals', { name: 'bad', event: 'x', filters: [['is', 'channel', ['Nope']]] });
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.details.issues[0].path).toBe('filters.0.2');
    const unknownKey = await post('goals', { name: 'extra', event: 'x', steps: [] });
    expect(unknownKey.status).toBe(400);
    expect(JSON.stringify(unknownKey.body.details)).toContain('steps');
    expect((await post('goals', { name: '   ', event: 'x' })).status).toBe(400);
    expect((await post('goals', { name: 'x'.repeat(SAVED_LIMITS.name + 1), event: 'x' })).status).toBe(400);
    expect((await post('goals', { name: 'x'.repeat(SAVED_LIMITS.name), event: 'x' })).status).toBe(201);
  });

  it('saves a funnel with the defaults of POST /v1/funnel and refuses a funnel /v1/funnel would refuse', async () => {
    const res = await post('funnels', { name: 'Checkout', steps: [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }] });
    expect(res.status).toBe(201);
    expect(res.body.funnel).toMatchObject({ name: 'Checkout', steps: [{ event: '$pageview', path: '/pricing', filters: [] }, { event: 'signup', filters: [] }], window_s: 86400, count_by: 'visitor', filters: [] });
    const one = await post('funnels', { name: 'one step', steps: [{ event: 'signup' }] });
    expect(one.status).toBe(400);
    expect(one.body.details.issues[0]).toEqual({ path: 'steps', message: 'a funnel has 2 to 10 steps' });
    const badStep = await post('funnels', { name: 'bad step', steps: [{ event: 'a' }, {}] });
    expect(badStep.status).toBe(400);
    expect(badStep.body.details.issues[0].path).toBe('steps.1');
    expect((await post('funnels', { name: 'bad window', steps: [{ event: 'a' }, { event: 'b' }], window_s: 0 })).status).toBe(400);
  });

  it('saves a segment of at least one condition', async () => {
    const res = await post('segments', { name: 'France', filters: [['is', 'country', ['FR']]] });
    expect(res.status).toBe(201);
    expect(res.body.segment).toMatchObject({ name: 'France', filters: [['is', 'country', ['FR']]] });
    expect((await post('segments', { name: 'nothing', filters: [] })).status).toBe(400);
    expect((await post('segments', { name: 'nothing' })).status).toBe(400);
  });

  it('answers 409 name_taken for a name the kind has in the project, on create and rename', async () => {
    await post('segments', { name: 'Mobile', filters: [['is', 'device_type', ['mobile']]] });
    const again = await post('segments', { name: 'Mobile', filters: [['is', 'device_type', ['tablet']]] });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'name_taken', details: { kind: 'segment', name: 'Mobile' } });
    // Another kind may have it.
    expect((await post('goals', { name: 'Mobile', event: 'x' })).status).toBe(201);
    const other = (await post('segments', { name: 'Tablet', filters: [['is', 'device_type', ['tablet']]] })).body.segment;
    expect((await patch('segments', other.id, { name: 'Mobile' })).status).toBe(409);
  });

  it(`answers 409 limit_reached for the ${SAVED_LIMITS.perKind + 1}st of a kind in a project`, async () => {
    const { project } = await p.keyStore.createProject({ name: 'full', org_id: p.orgId });
    for (let i = 0; i < SAVED_LIMITS.perKind; i++) await p.keyStore.saved.create(project.id, 'goal', { name: `g${i}`, definition: { event: 'x', filters: [] } });
    const res = await request(p.app).post(`/admin/projects/${project.id}/goals`).set('authorization', editor).send({ name: 'one more', event: 'x' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'limit_reached', details: { kind: 'goal', limit: SAVED_LIMITS.perKind } });
  });

  it('PATCH takes any subset, checks the whole again, and null removes a goal\'s event or path', async () => {
    const goal = (await post('goals', { name: 'Pricing', event: '$pageview', path: '/pricing' })).body.goal;
    const renamed = await patch('goals', goal.id, { name: 'Pricing page' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.goal).toMatchObject({ id: goal.id, name: 'Pricing page', event: '$pageview', path: '/pricing' });
    const pathOnly = await patch('goals', goal.id, { event: null });
    expect(pathOnly.body.goal).toEqual({ ...renamed.body.goal, event: undefined, updated_at: expect.any(String) });
    expect(pathOnly.body.goal).not.toHaveProperty('event');
    // Without its path too it would be no goal: refused, nothing changed.
    const none = await patch('goals', goal.id, { path: null });
    expect(none.status).toBe(400);
    expect((await request(p.app).get(`/admin/projects/${p.projectId}/goals`).set('authorization', editor)).body.goals).toContainEqual(pathOnly.body.goal);
    const funnel = (await post('funnels', { name: 'Two', steps: [{ event: 'a' }, { event: 'b' }] })).body.funnel;
    const wider = await patch('funnels', funnel.id, { window_s: 3600, count_by: 'user' });
    expect(wider.body.funnel).toMatchObject({ steps: funnel.steps, window_s: 3600, count_by: 'user' });
    expect((await patch('funnels', funnel.id, { steps: [{ event: 'a' }] })).status).toBe(400);
    expect((await patch('funnels', funnel.id, { nonsense: 1 })).status).toBe(400);
  });

  it('DELETE removes it; an unknown id, or one of another project, is 404', async () => {
    const segment = (await post('segments', { name: 'Gone', filters: [['is', 'country', ['DE']]] })).body.segment;
    const { project } = await p.keyStore.createProject({ name: 'other', org_id: p.orgId });
    const elsewhere = request(p.app).delete(`/admin/projects/${project.id}/segments/${segment.id}`).set('authorization', editor);
    expect((await elsewhere).status).toBe(404);
    expect((await request(p.app).patch(`/admin/projects/${project.id}/segments/${segment.id}`).set('authorization', editor).send({ name: 'x' })).status).toBe(404);
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/segments/${segment.id}`).set('authorization', editor)).status).toBe(204);
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/segments/${segment.id}`).set('authorization', editor)).status).toBe(404);
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/segments/not-an-id`).set('authorization', editor)).status).toBe(404);
  });

  it('writes who saved, changed and deleted each definition to the organization\'s audit log', async () => {
    const goal = (await post('goals', { name: 'Audited', event: 'x' })).body.goal;
    await patch('goals', goal.id, { name: 'Audited again' });
    await request(p.app).delete(`/admin/projects/${p.projectId}/goals/${goal.id}`).set('authorization', editor);
    const entries = (await p.accounts.audit.list(p.orgId, { limit: 100 })).filter((e) => e.target.id === goal.id);
    expect(entries.map((e) => [e.action, e.actor.name, e.target])).toEqual([
      ['goal.deleted', p.users.editor.email, { type: 'goal', id: goal.id, name: 'Audited again' }],
      ['goal.updated', p.users.editor.email, { type: 'goal', id: goal.id, name: 'Audited again' }],
      ['goal.created', p.users.editor.email, { type: 'goal', id: goal.id, name: 'Audited' }],
    ]);
    expect(entries[1]!.details).toEqual({ project_id: p.projectId, changed: ['name'] });
  });

  it('the operator saves for any project; an unknown project is 404', async () => {
    const op = `Bearer ${ADMIN_TOKEN}`;
    expect((await post('goals', { name: 'by the operator', event: 'x' }, op)).status).toBe(201);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await request(p.app).post(`/admin/projects/${unknown}/goals`).set('authorization', op).send({ name: 'x', event: 'x' })).status).toBe(404);
    expect((await request(p.app).get(`/admin/projects/${unknown}/goals`).set('authorization', op)).status).toBe(404);
  });
});
