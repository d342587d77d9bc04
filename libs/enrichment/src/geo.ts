import { createRequire } from 'node:module';
import { normalizeIp } from './ip-hash';

type GeoLookup = (ip: string) => { country?: string } | null;
let lookup: GeoLookup | undefined;

/** Loads geoip-lite's data (about a second, ~100 MB) once; call at start-up so the first request does not pay. */
export function loadGeo(): void {
  if (!lookup) {
    const req = createRequire(__filename);
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
