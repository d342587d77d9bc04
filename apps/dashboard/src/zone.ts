// The project's time zone on the dashboard (issue 47 item 2): presets, custom dates and chart buckets are its local
// days and wall clock. Learnt from the signed-in project object (admin API) or, with a pasted read key, from
// GET /v1/project (once per key, a share link's credential too); UTC when neither says (a server before issue 47).
import type { Api } from './api';
import { knownTimeZone } from './state';

let zone = 'UTC';
const byKey = new Map<string, string>();

/** The time zone the dashboard shows now. */
export const projectZone = (): string => zone;

/** Sets the time zone from what is known (`known`: the signed-in project's), else asks the API with the key. */
export async function learnZone(api: Api, key: string, known?: string): Promise<string> {
  if (known !== undefined) return (zone = knownTimeZone(known));
  const cached = byKey.get(key);
  if (cached !== undefined) return (zone = cached);
  const learnt = await api.project().then(
    (a) => knownTimeZone(a.project.timezone),
    () => 'UTC',
  );
  byKey.set(key, learnt);
  return (zone = learnt);
}
