/**
 * Stored `source` values as people know them, for the dashboard's lists (issue 47 item 5). One site reaches the store
 * under several spellings: a list entry's name (rules 7-9: `google`), the slug of rule 13 (`news-ycombinator-com`,
 * `chatgpt-com`) and whatever utm_source says (`news.ycombinator.com`, `hn`, `chatgpt.com`, `chatgpt`).
 * `sourceKeyOf` names the site (its canonical source) and `sourceLabelOf` gives its display name from
 * ../data/source-names.json (labels, and aliases for utm_source spellings). Display only: the API keeps the stored values.
 */
import names from '../data/source-names.json';
import { aiAssistantOfSource } from './ai-assistants';
import { HOST_LISTS, lookupHost } from './hosts';
import { slugifyHost } from './parse';

const LABELS: Readonly<Record<string, string>> = names.labels;
const ALIASES: Readonly<Record<string, string>> = names.aliases;
const HOST_LIKE = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;
/** A rule-13 slug of a host: dashes for its dots, ending in a common top-level domain (`spring-sale` is no host). */
const SLUG_LIKE = /^[a-z0-9]+(-[a-z0-9]+)*-(com|net|org|io|co|ai|app|dev|me|tv|gg|info|biz|xyz|uk|de|fr|es|it|nl|pl|ru|jp|cn|br|in|ca|au|ch|at|se|no|dk|fi|cz|be|pt|tr|kr)$/;
/** The search engines' and social networks' names (a title-case label for those the data has none for). */
const ENTRY_NAMES: ReadonlySet<string> = new Set([...HOST_LISTS.search, ...HOST_LISTS.social].map((e) => e.name));

/** The list entry a host names when it is a search engine or a social network (the lists rules 7-9 name sources by). */
function entryOf(host: string): string | undefined {
  const entry = lookupHost(host.startsWith('www.') ? host.slice(4) : host);
  return entry !== undefined && (entry.list === 'search' || entry.list === 'social') ? entry.name : undefined;
}

/**
 * The canonical source of a stored `source` value: the site it names, so that every spelling of one site gives one
 * key. In order: an alias of the data (`hn`), an AI assistant (`chatgpt.com`, `chatgpt-com`, `openai` -> `chatgpt`),
 * a search engine or social network named by a host (`www.google.de` -> `google`, `t.co` -> `twitter`), by rule 13's
 * slug of one of its hosts (`l-facebook-com` -> `facebook`), any other host as rule 13 would slug it
 * (`news.ycombinator.com` -> `news-ycombinator-com`); otherwise the value itself (lowercased, trimmed).
 */
export function sourceKeyOf(source: string | null | undefined): string {
  if (typeof source !== 'string') return '';
  const s = source.trim().toLowerCase();
  const alias = ALIASES[s];
  if (alias !== undefined) return alias;
  const assistant = aiAssistantOfSource(s);
  if (assistant !== undefined) return assistant;
  if (LABELS[s] !== undefined || ENTRY_NAMES.has(s)) return s;
  if (HOST_LIKE.test(s)) {
    const key = entryOf(s) ?? slugifyHost(s);
    return ALIASES[key] ?? key;
  }
  // A rule-13 slug: its dots became dashes (a host with a dash of its own cannot be told apart; it is kept as is).
  if (SLUG_LIKE.test(s)) return entryOf(s.replaceAll('-', '.')) ?? s;
  return s;
}

/** "Words Like This" from a slug, for list entries the data has no label for (the generated hosts' names). */
const titleOf = (name: string) => name.replace(/(^|-)([a-z0-9])/g, (_m, sep: string, c: string) => (sep ? ' ' : '') + c.toUpperCase());

/**
 * The display name of a stored `source` value: the label of its canonical source (`Hacker News`, `ChatGPT`,
 * `Google`); a search engine or social network without one is its name in title case; any other value is shown as
 * stored (an unknown site's slug, a campaign's utm_source).
 */
export function sourceLabelOf(source: string | null | undefined): string {
  const key = sourceKeyOf(source);
  const label = LABELS[key];
  if (label !== undefined) return label;
  return ENTRY_NAMES.has(key) ? titleOf(key) : key;
}
