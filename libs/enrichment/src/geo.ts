import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { normalizeIp } from './ip-hash';

type GeoLookup = (ip: string) => { country?: string } | null;
let lookup: GeoLookup | undefined;

const COUNTRY_FILES = ['geoip-country.dat', 'geoip-country6.dat'];

/**
 * A directory holding geoip-lite's country files only (symlinks into its package). geoip-lite loads the city files
 * whenever they exist (146 MB in memory) and falls back to the country files (14 MB) when they do not; we store the
 * country alone, and the country of both comes from the same GeoLite2 release.
 */
function countryOnlyDir(req: NodeJS.Require): string {
  const data = join(dirname(req.resolve('geoip-lite/package.json')), 'data');
  const dir = join(tmpdir(), `analytics-geoip-country-${createHash('sha256').update(data).digest('hex').slice(0, 12)}`);
  mkdirSync(dir, { recursive: true });
  for (const file of COUNTRY_FILES) {
    try {
      symlinkSync(join(data, file), join(dir, file));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; // made by an earlier start (or a parallel one)
    }
  }
  return dir;
}

/** Loads geoip-lite's country data (~14 MB) once; call at start-up so the first request does not pay. */
export function loadGeo(): void {
  if (!lookup) {
    const req = createRequire(__filename);
    // geoip-lite reads its data directory from this global when it is first required. A read-only file system
    // (no writable tmpdir) keeps its default directory: the same countries, 130 MB more memory.
    try {
      (globalThis as { geodatadir?: string }).geodatadir = countryOnlyDir(req);
    } catch {
      delete (globalThis as { geodatadir?: string }).geodatadir;
    }
    lookup = (req('geoip-lite') as { lookup: GeoLookup }).lookup;
  }
}

/** ISO 3166-1 alpha-2 country of an IP, or '' when unknown (private ranges, loopback, not in the database). */
export function countryOf(ip: string | undefined): string {
  if (!ip) return '';
  loadGeo();
  try {
    return lookup!(normalizeIp(ip))?.country ?? '';
  } catch {
    return '';
  }
}
