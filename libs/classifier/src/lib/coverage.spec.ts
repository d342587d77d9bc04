import { COVERAGE_REFERENCE, referenceCoverage } from './coverage';

const HOST_RE = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$/;

describe('coverage of our reference list of search engines and social networks', () => {
  it('is a list of well-formed, unique hosts: over 150 search hosts and 90 social hosts', () => {
    const hosts = (['search', 'social'] as const).flatMap((list) => COVERAGE_REFERENCE[list].flatMap((e) => e.hosts));
    for (const host of hosts) expect(host).toMatch(HOST_RE);
    expect(new Set(hosts).size).toBe(hosts.length);
    expect(COVERAGE_REFERENCE.search.flatMap((e) => e.hosts).length).toBeGreaterThan(150);
    expect(COVERAGE_REFERENCE.social.flatMap((e) => e.hosts).length).toBeGreaterThan(90);
  });

  it.each(referenceCoverage().map((c) => [c.list, c] as const))('classifies at least 85%% of the %s hosts as their medium', (list, c) => {
    const report = `${(100 * c.share).toFixed(1)}% of the ${list} hosts; missed: ${c.missed.join(' ')}`;
    expect(c.share >= 0.85 ? 'at least 85%' : report).toBe('at least 85%');
  });
});
