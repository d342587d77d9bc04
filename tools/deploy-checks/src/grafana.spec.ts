import request from 'supertest';
import express from 'express';
import { ServiceMetrics } from '@analytics/service-kit';
import { readDocker } from './routes';

// docker/grafana/analytics.json imports cleanly (an exported dashboard with a Prometheus datasource input) and every
// panel queries only metrics an app's GET /metrics exposes (names taken from a real scrape, not a list kept here).
type Target = { expr: string; refId: string; datasource: { uid: string } };
type Panel = { id: number; type: string; title: string; datasource: { type: string; uid: string }; gridPos: Record<string, number>; targets: Target[] };
const PROMQL_WORDS = new Set(['sum', 'by', 'rate', 'max', 'histogram_quantile', 'le', 'route', 'status', 'reason', 'instance', 'job']);

async function exposedNames(): Promise<Set<string>> {
  const metrics = new ServiceMetrics();
  const app = express();
  app.use(metrics.observe);
  app.get('/metrics', metrics.serve);
  // A labelled series appears once observed: one request first.
  await request(app).get('/metrics');
  const text = (await request(app).get('/metrics')).text;
  return new Set([...text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{| )/gm)].map((m) => m[1]!));
}

describe('Grafana dashboard (docker/grafana/analytics.json)', () => {
  const dash = JSON.parse(readDocker('grafana/analytics.json'));

  it('is an importable dashboard: a Prometheus datasource input, a uid, a schema version, panels with ids and positions', () => {
    expect(dash.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    expect(dash).toMatchObject({ uid: 'event-analytics', title: expect.any(String), schemaVersion: expect.any(Number), id: null });
    const panels = dash.panels as Panel[];
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const p of panels) {
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      expect(Object.keys(p.gridPos).sort()).toEqual(['h', 'w', 'x', 'y']);
      expect(p.targets.length).toBeGreaterThan(0);
    }
    // What the issue asks the dashboard to show.
    const exprs = panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
    for (const name of ['analytics_http_requests_total', 'analytics_http_request_duration_seconds_bucket', 'analytics_events_ingested_total', 'analytics_aggregate_lag_seconds', 'analytics_refusals_total']) {
      expect(exprs).toContain(name);
    }
  });

  it('queries only metrics the apps expose', async () => {
    const exposed = await exposedNames();
    const unknown: string[] = [];
    for (const p of dash.panels as Panel[]) {
      for (const t of p.targets) {
        // Metric names: identifiers outside label matchers, braces, strings and Grafana's $variables.
        const bare = t.expr.replace(/\{[^}]*\}/g, ' ').replace(/"[^"]*"/g, ' ').replace(/\$\w+/g, ' ').replace(/\[[^\]]*\]/g, ' ');
        for (const [name] of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
          if (PROMQL_WORDS.has(name) || /^\d/.test(name)) continue;
          if (!exposed.has(name)) unknown.push(`${p.title}: ${name}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });
});
