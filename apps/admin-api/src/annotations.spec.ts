import request from 'supertest';
import { memoryPglitePort } from '@analytics/auth/testing';
import { ADMIN_TOKEN, type People, setUpPeople } from './test-people';

// A project's annotations through the admin routes (issue 48, docs/alerts-and-reports.md "Annotations"). Who may call
// each route is roles.spec.ts's table; here: what they answer, who is named as their author, and the audit log.

describe('annotations (admin routes)', () => {
  let p: People;
  let editor: string;
  let viewer: string;
  beforeAll(async () => {
    p = await setUpPeople(await memoryPglitePort());
    editor = `Bearer ${await p.tokenOf('editor')}`;
    viewer = `Bearer ${await p.tokenOf('viewer')}`;
  }, 120_000);
  afterAll(() => p.db.close());

  const base = () => `/admin/projects/${p.projectId}/annotations`;
  const post = (body: object, as = editor) => request(p.app).post(base()).set('authorization', as).send(body);
  const list = (query: Record<string, string>, as = viewer) => request(p.app).get(base()).query(query).set('authorization', as);

  it("adds one as an editor (created_by: the editor's user id) or the operator (null); any member lists them oldest first", async () => {
    const res = await post({ at: '2026-03-04T09:30:00Z', text: 'Spring campaign', kind: 'campaign' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ annotation: { id: expect.any(String), at: '2026-03-04T09:30:00.000Z', text: 'Spring campaign', kind: 'campaign', created_by: p.users.editor.id, created_at: expect.any(String) } });
    const byOperator = await post({ at: '2026-03-02', text: 'Outage' , kind: 'incident' }, `Bearer ${ADMIN_TOKEN}`);
    expect(byOperator.status).toBe(201);
    expect(byOperator.body.annotation.created_by).toBeNull();
    const listed = await list({ from: '2026-03-01', to: '2026-04-01' });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ annotations: [byOperator.body.annotation, res.body.annotation] });
  });

  it('refuses a bad body with 400 invalid_payload naming the field, and a bad range with 400 invalid_params', async () => {
    for (const [body, field] of [[{ text: 'x' }, 'at'], [{ at: '2026-03-01', text: '' }, 'text'], [{ at: '2026-03-01', text: 'x', kind: 'release' }, 'kind']] as const) {
      const res = await post(body);
      expect({ field, status: res.status, error: res.body.error, named: JSON.stringify(res.body.details).includes(field) }).toEqual({ field, status: 400, error: 'invalid_payload', named: true });
    }
    for (const query of [{ from: 'x', to: '2026-04-01' }, { from: '2026-04-01' }] as Array<Record<string, string>>) {
      const res = await list(query);
      expect({ query, status: res.status, error: res.body.error }).toEqual({ query, status: 400, error: 'invalid_params' });
    }
  });

  it('deletes any annotation of the project as an editor (one made by a key too), audited; another project\'s is 404', async () => {
    const byKey = (await p.keyStore.annotations.create(p.projectId, { at: Date.UTC(2026, 2, 5), text: 'Deployed', kind: 'deploy', created_by: 'key:abc' }))!;
    const other = (await p.keyStore.createProject({ name: 'elsewhere', org_id: p.orgId })).project;
    expect((await request(p.app).delete(`/admin/projects/${other.id}/annotations/${byKey.id}`).set('authorization', editor)).status).toBe(404);
    expect((await request(p.app).delete(`${base()}/${byKey.id}`).set('authorization', editor)).status).toBe(204);
    expect((await request(p.app).delete(`${base()}/${byKey.id}`).set('authorization', editor)).status).toBe(404);
    const audit = await request(p.app).get(`/admin/orgs/${p.orgId}/audit`).query({ limit: '50' }).set('authorization', `Bearer ${await p.tokenOf('owner')}`);
    const actions = audit.body.entries.filter((e: { target: { type: string } }) => e.target.type === 'annotation').map((e: { action: string; target: { id: string } }) => [e.action, e.target.id]);
    expect(actions).toContainEqual(['annotation.deleted', byKey.id]);
    expect(actions.some(([action]: [string]) => action === 'annotation.created')).toBe(true);
  });
});
