import names from '../data/source-names.json';
import { AI_ASSISTANTS } from './ai-assistants';
import { classify } from './classify';
import { HAND_LISTS } from './hand-lists';
import { HOST_LISTS } from './hosts';
import { sourceKeyOf, sourceLabelOf } from './source-names';

/** The source the classifier stores for a visit from `referrer`, or tagged with `utm_source`. */
const fromReferrer = (referrer: string) => classify({ url: 'https://shop.example/p', referrer }).source;
const fromUtm = (utmSource: string) => classify({ url: `https://shop.example/p?utm_source=${encodeURIComponent(utmSource)}` }).source;

describe('source names: one site, one key and one display name, whatever spelling was stored', () => {
  it.each([
    ['Hacker News', ['https://news.ycombinator.com/item?id=1'], ['news.ycombinator.com', 'hn', 'HackerNews', 'news-ycombinator-com']],
    ['ChatGPT', ['https://chatgpt.com/', 'https://chat.openai.com/c/1'], ['chatgpt.com', 'chatgpt', 'openai', 'ChatGPT']],
    ['Google', ['https://www.google.com/', 'https://www.google.co.uk/search?q=x'], ['google', 'google.com', 'www.google.de']],
    ['X (Twitter)', ['https://t.co/abc', 'https://x.com/someone'], ['twitter', 'x', 'x.com', 't.co']],
    ['Facebook', ['https://m.facebook.com/', 'https://l.facebook.com/l.php?u=x'], ['facebook', 'fb', 'facebook.com']],
    ['Perplexity', ['https://www.perplexity.ai/search/x'], ['perplexity', 'perplexity.ai']],
    ['GitHub', ['https://github.com/org/repo'], ['github', 'github.com']],
    ['DuckDuckGo', ['https://duckduckgo.com/'], ['duckduckgo', 'ddg']],
  ])('%s: referrers and utm_source spellings share one key and the label', (label, referrers, utmSources) => {
    const stored = [...referrers.map(fromReferrer), ...utmSources.map(fromUtm)];
    const keys = new Set(stored.map(sourceKeyOf));
    expect({ stored, keys: [...keys] }).toEqual({ stored, keys: [expect.any(String)] });
    for (const s of stored) expect(sourceLabelOf(s)).toBe(label);
  });

  it('the classifier values and the unknown', () => {
    expect(['direct', 'internal', 'email', 'unknown'].map(sourceLabelOf)).toEqual(['Direct', 'Internal', 'Email', 'Unknown']);
    expect(sourceLabelOf('')).toBe('');
    expect(sourceLabelOf(null)).toBe('');
  });

  it('a site the data does not know keeps its stored spelling; its utm_source host spelling joins its rule-13 slug', () => {
    expect(fromReferrer('https://blog.example.org/post')).toBe('blog-example-org');
    expect(sourceKeyOf(fromUtm('blog.example.org'))).toBe('blog-example-org');
    expect(sourceLabelOf('blog-example-org')).toBe('blog-example-org');
    // A campaign's own utm_source words stay as they are, apart from their case.
    expect(sourceLabelOf('newsletter')).toBe('newsletter');
    expect(sourceKeyOf('spring-sale')).toBe('spring-sale');
    expect(sourceKeyOf('Newsletter')).toBe('newsletter');
  });

  it('a generated search engine without a label of ours gets its name in title case', () => {
    const generated = HOST_LISTS.search.find((e) => !(e.name in names.labels) && /^[a-z]+-[a-z]+$/.test(e.name))!;
    expect(generated).toBeDefined();
    const words = generated.name.split('-').map((w) => w[0]!.toUpperCase() + w.slice(1));
    expect(sourceLabelOf(generated.name)).toBe(words.join(' '));
  });

  it('every search engine, social network and AI assistant of our hand lists has a label; every alias names a labelled source', () => {
    const unlabelled = [...HAND_LISTS.search, ...HAND_LISTS.social].map((e) => e.name).filter((n) => !(n in names.labels));
    expect(unlabelled).toEqual([]);
    for (const a of AI_ASSISTANTS) expect([a.name, names.labels[a.name as keyof typeof names.labels]]).toEqual([a.name, expect.any(String)]);
    for (const [alias, key] of Object.entries(names.aliases)) expect([alias, key in names.labels]).toEqual([alias, true]);
  });
});
