import { HOST_LISTS, isWildcardEnding, lookupAndroidApp, lookupHost, type ListKind } from './hosts';
import { classify } from './classify';

const LIST_KINDS: readonly ListKind[] = ['social', 'search', 'email', 'referral'];
const NAME_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const DOMAIN_RE = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z](?:[a-z0-9-]*[a-z0-9])?$/;
const WILDCARD_RE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.\*$/;
const ANDROID_APP_RE = /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+$/;

const allEntries = LIST_KINDS.flatMap((list) => HOST_LISTS[list].map((entry) => ({ list, entry })));

describe('host list data', () => {
  it('has the promised sizes', () => {
    expect(HOST_LISTS.social.length).toBeGreaterThanOrEqual(40);
    expect(HOST_LISTS.search.length).toBeGreaterThanOrEqual(30);
    expect(HOST_LISTS.email.length).toBeGreaterThanOrEqual(30);
  });

  it('uses lowercase slugs as canonical names, unique across lists', () => {
    const names = allEntries.map(({ entry }) => entry.name);
    for (const name of names) expect(name).toMatch(NAME_RE);
    expect(new Set(names).size).toBe(names.length);
  });

  it('has only known keys, and at least one domain per entry', () => {
    for (const { list, entry } of allEntries) {
      const allowed = list === 'email' ? ['name', 'kind', 'domains', 'android_apps'] : ['name', 'domains', 'android_apps'];
      for (const key of Object.keys(entry)) expect(allowed).toContain(key);
      expect(entry.domains.length).toBeGreaterThan(0);
    }
  });

  it('gives every email entry a kind', () => {
    for (const entry of HOST_LISTS.email) expect(['webmail', 'esp', 'link-protection']).toContain(entry.kind);
  });

  it('lists well-formed, lowercase domains without a www. prefix', () => {
    for (const { entry } of allEntries) {
      for (const domain of entry.domains) {
        expect(DOMAIN_RE.test(domain) || WILDCARD_RE.test(domain)).toBe(true);
        expect(domain.startsWith('www.')).toBe(false);
      }
    }
  });

  it('lists every domain (and every wildcard brand) once across all lists', () => {
    const domains = allEntries.flatMap(({ entry }) => entry.domains);
    const duplicates = domains.filter((d, i) => domains.indexOf(d) !== i);
    expect(duplicates).toStrictEqual([]);
  });

  it('lists well-formed, unique Android package names', () => {
    const apps = allEntries.flatMap(({ entry }) => entry.android_apps ?? []);
    for (const app of apps) expect(app).toMatch(ANDROID_APP_RE);
    expect(new Set(apps).size).toBe(apps.length);
  });

  it('does not list news.ycombinator.com (it must stay a referral)', () => {
    expect(lookupHost('news.ycombinator.com')).toBeUndefined();
  });

  it.each([
    ['facebook', ['facebook.com', 'fb.com', 'fb.me', 'm.facebook.com', 'l.facebook.com', 'lm.facebook.com', 'business.facebook.com']],
    ['twitter', ['twitter.com', 'x.com', 't.co']],
    ['linkedin', ['linkedin.com', 'lnkd.in']],
    ['instagram', ['instagram.com', 'l.instagram.com']],
    ['youtube', ['youtube.com', 'youtu.be']],
    ['pinterest', ['pinterest.com', 'pin.it']],
    ['threads', ['threads.net', 'threads.com']],
    ['mastodon', ['mastodon.social', 'mastodon.online', 'mstdn.social', 'fosstodon.org', 'hachyderm.io', 'infosec.exchange']],
    ['bluesky', ['bsky.app']],
    ['telegram', ['t.me', 'web.telegram.org']],
    ['whatsapp', ['wa.me', 'web.whatsapp.com']],
    ['reddit', ['reddit.com']],
    ['tiktok', ['tiktok.com']],
    ['vk', ['vk.com']],
    ['weibo', ['weibo.com']],
    ['snapchat', ['snapchat.com']],
    ['discord', ['discord.com']],
    ['quora', ['quora.com']],
    ['tumblr', ['tumblr.com']],
  ] as const)('social entry %s covers the hosts of the contract', (name, hosts) => {
    for (const host of hosts) expect(lookupHost(host)).toStrictEqual({ list: 'social', name });
  });

  it.each([
    'mail.google.com',
    'outlook.live.com',
    'outlook.office.com',
    'outlook.office365.com',
    'mail.yahoo.com',
    'mail.aol.com',
    'mail.proton.me',
    'mail.zoho.com',
    'app.fastmail.com',
    'mail.yandex.ru',
    'e.mail.ru',
    'list-manage.com',
    'mailchi.mp',
    'sendgrid.net',
    'klaviyomail.com',
    'klclick.com',
    'hubspotlinks.com',
    'createsend.com',
  ])('email list covers %s', (host) => {
    expect(lookupHost(host)?.list).toBe('email');
  });
});

describe('every listed domain classifies as its entry', () => {
  const cases = allEntries.flatMap(({ list, entry }) =>
    entry.domains.filter((d) => !d.endsWith('.*')).map((domain) => [domain, list, entry.name] as const),
  );
  const expectedFor = (list: ListKind, name: string): { source: string; medium: string } => {
    switch (list) {
      case 'social':
        return { source: name, medium: 'social' };
      case 'search':
        return { source: name, medium: 'organic' };
      case 'email':
        return { source: 'email', medium: 'email' };
      case 'referral':
        return { source: '', medium: 'referral' };
    }
  };
  // One test per list that names every mismatch (a test per host made thousands of tests of CI's time).
  it.each(LIST_KINDS)('every %s domain, bare, with www. and with a subdomain', (kind) => {
    const mismatches: string[] = [];
    for (const [domain, list, name] of cases.filter(([, list]) => list === kind)) {
      const exp = expectedFor(list, name);
      for (const host of [domain, `www.${domain}`, `sub.${domain}`]) {
        const result = classify({ url: 'https://shop.example.com/', referrer: `https://${host}/path` });
        if (result.medium !== exp.medium || (list !== 'referral' && result.source !== exp.source)) {
          mismatches.push(`${host}: got ${result.source}/${result.medium}, want ${list === 'referral' ? '*' : exp.source}/${exp.medium}`);
        }
      }
    }
    expect(mismatches).toStrictEqual([]);
  });
});

describe('lookupHost', () => {
  it.each([
    ['google.com', 'search', 'google'],
    ['www.google.com', 'search', 'google'],
    ['news.google.com', 'search', 'google'],
    ['mail.google.com', 'email', 'gmail'],
    ['a.b.mail.google.com', 'email', 'gmail'],
    ['docs.google.com', 'referral', 'google-workspace'],
    ['google.co.uk', 'search', 'google'],
    ['www.google.com.br', 'search', 'google'],
    ['google.de', 'search', 'google'],
    ['google.cat', 'search', 'google'],
    ['yandex.com.tr', 'search', 'yandex'],
    ['mail.yandex.com.tr', 'email', 'yandex-mail'],
    ['mail.yandex.uz', 'search', 'yandex'],
    ['suche.gmx.net', 'search', 'gmx'],
    ['navigator.gmx.net', 'email', 'gmx-mail'],
    ['my.mail.ru', 'social', 'mymailru'],
    ['lastfm.com.br', 'social', 'lastfm'],
    ['zen.yandex.ru', 'social', 'dzen'],
    ['yahoo.co.jp', 'search', 'yahoo'],
    ['mail.yahoo.co.jp', 'email', 'yahoo-mail'],
    ['login.yahoo.com', 'referral', 'yahoo-login'],
    ['go.mail.ru', 'search', 'mailru'],
    ['e.mail.ru', 'email', 'mailru-mail'],
    ['mail.ru', undefined, undefined],
    ['weixin.qq.com', 'social', 'wechat'],
    ['mail.qq.com', 'email', 'qq-mail'],
    ['qq.com', undefined, undefined],
    ['x..google.com', 'search', 'google'],
    ['google', undefined, undefined],
    ['com', undefined, undefined],
    ['', undefined, undefined],
    ['google.example.org', undefined, undefined],
    ['google.net', undefined, undefined],
    ['google.co.com', undefined, undefined],
    ['google.com.evil.example', undefined, undefined],
    ['pinterest.com.au', 'social', 'pinterest'],
    ['gmx.net', 'email', 'gmx-mail'],
    ['gmx.at', 'email', 'gmx-mail'],
  ] as const)('%s -> %s %s', (host, list, name) => {
    const entry = lookupHost(host);
    if (list === undefined) expect(entry).toBeUndefined();
    else expect(entry).toStrictEqual({ list, name });
  });

  it('finds Android apps by exact package name only', () => {
    expect(lookupAndroidApp('com.google.android.gm')).toStrictEqual({ list: 'email', name: 'gmail' });
    expect(lookupAndroidApp('com.google.android.gm.lite')).toBeUndefined();
    expect(lookupAndroidApp('android.gm')).toBeUndefined();
  });
});

describe('isWildcardEnding', () => {
  it.each(['com', 'de', 'ru', 'co', 'uk', 'com.br', 'com.tr', 'com.au', 'co.uk', 'co.jp', 'co.in'])('accepts %s', (s) => {
    expect(isWildcardEnding(s)).toBe(true);
  });
  it.each(['', 'net', 'org', 'info', 'c', 'deu', 'example.org', 'co.com', 'ru.com', 'com.', 'co.', 'com.b', 'com.bra', 'org.uk', 'DE', 'd1', 'co.uk.evil'])(
    'rejects %s',
    (s) => {
      expect(isWildcardEnding(s)).toBe(false);
    },
  );
});

describe('well-known hosts beyond the package', () => {
  it.each([
    ['tiktok.com', 'social', 'tiktok'],
    ['discord.gg', 'social', 'discord'],
    ['t.me', 'social', 'telegram'],
    ['threads.net', 'social', 'threads'],
    ['snapchat.com', 'social', 'snapchat'],
    ['bsky.app', 'social', 'bluesky'],
    ['mstdn.jp', 'social', 'mastodon'],
    ['mastodonapp.uk', 'social', 'mastodon'],
    ['bilibili.com', 'social', 'bilibili'],
    ['www.douyin.com', 'social', 'douyin'],
    ['www.nicovideo.jp', 'social', 'niconico'],
    ['weixin.qq.com', 'social', 'wechat'],
    ['soundcloud.com', 'social', 'soundcloud'],
    ['search.brave.com', 'search', 'brave'],
    ['www.startpage.com', 'search', 'startpage'],
    ['www.qwant.com', 'search', 'qwant'],
    ['www.mojeek.com', 'search', 'mojeek'],
    ['www.ecosia.org', 'search', 'ecosia'],
    ['coccoc.com', 'search', 'coccoc'],
    ['search.seznam.cz', 'search', 'seznam'],
    ['search.naver.com', 'search', 'naver'],
    ['search.daum.net', 'search', 'daum'],
    ['search.yahoo.co.jp', 'search', 'yahoo'],
    ['www.sogou.com', 'search', 'sogou'],
    ['www.haosou.com', 'search', '360search'],
    ['www.so.com', 'search', '360search'],
    ['yandex.kz', 'search', 'yandex'],
    ['yandex.com.am', 'search', 'yandex'],
    ['yandex.co.il', 'search', 'yandex'],
    ['www.google.com.ng', 'search', 'google'],
    ['www.google.co.ke', 'search', 'google'],
    ['www.google.it.ao', 'search', 'google'],
    ['mail.yahoo.co.uk', 'email', 'yahoo-mail'],
  ] as const)('%s -> %s %s', (host, list, name) => {
    expect(lookupHost(host)).toStrictEqual({ list, name });
  });
});
