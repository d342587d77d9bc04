// Data only (no imports): the dashboard bundles it as @analytics/enrichment/ai-crawlers.

/** Crawlers and fetchers of AI companies: for the dashboard's "AI crawler hits by crawler". */
export interface AiCrawler {
  readonly name: string;
  readonly operator: string;
}

export const AI_CRAWLERS: readonly AiCrawler[] = Object.freeze(
  (
    [
      ['GPTBot', 'OpenAI'],
      ['ChatGPT-User', 'OpenAI'],
      ['OAI-SearchBot', 'OpenAI'],
      ['ClaudeBot', 'Anthropic'],
      ['Claude-User', 'Anthropic'],
      ['Claude-SearchBot', 'Anthropic'],
      ['Claude-Web', 'Anthropic'],
      ['anthropic-ai', 'Anthropic'],
      ['PerplexityBot', 'Perplexity'],
      ['Perplexity-User', 'Perplexity'],
      ['Google-Extended', 'Google'],
      ['Google-CloudVertexBot', 'Google'],
      ['Bytespider', 'ByteDance'],
      ['CCBot', 'Common Crawl'],
      ['Applebot-Extended', 'Apple'],
      ['meta-externalagent', 'Meta'],
      ['meta-externalfetcher', 'Meta'],
      ['FacebookBot', 'Meta'],
      ['Amazonbot', 'Amazon'],
      ['cohere-ai', 'Cohere'],
      ['cohere-training-data-crawler', 'Cohere'],
      ['MistralAI-User', 'Mistral'],
      ['DuckAssistBot', 'DuckDuckGo'],
      ['YouBot', 'You.com'],
      ['Diffbot', 'Diffbot'],
      ['AI2Bot', 'Allen Institute for AI'],
      ['Timpibot', 'Timpi'],
      ['PetalBot', 'Huawei'],
    ] as const
  ).map(([name, operator]) => Object.freeze({ name, operator })),
);
