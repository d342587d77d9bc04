/**
 * The channel of an event stored before migration 008, from its stored columns: the DEFAULT of `events.channel` in
 * every mode (a migration fragment: changing it changes 008's checksum, which stores that applied it refuse).
 * channelOf's rule order over source, medium, rule id and referrer, with the paid split and the AI assistants frozen
 * to the best-known names; channel.spec.ts holds it to channelOf for one input of every channel.
 */
export const CHANNEL_DEFAULT_SQL = String.raw`multiIf(
      source_rule_id = 'internal', 'internal',
      source_rule_id = 'direct', 'direct',
      medium = 'paid' OR match(medium, '^(.*cp.*|ppc|paid.*|banner|interstitial|expandable)$'),
        multiIf(medium LIKE '%social%' OR source IN ('facebook', 'fb', 'instagram', 'ig', 'meta', 'tiktok', 'linkedin', 'li', 'twitter', 'x', 'tw', 'youtube', 'yt', 'pinterest', 'reddit', 'snapchat', 'snap'), 'paid_social',
                medium LIKE '%search%' OR source IN ('google', 'bing', 'adwords', 'gads', 'microsoft', 'msads', 'yahoo', 'duckduckgo', 'baidu', 'yandex', 'naver'), 'paid_search',
                'paid_other'),
      domainWithoutWWW(ifNull(referrer, '')) IN ('chatgpt.com', 'chat.openai.com', 'chat.com', 'perplexity.ai', 'pplx.ai', 'claude.ai', 'gemini.google.com', 'bard.google.com', 'copilot.microsoft.com', 'copilot.cloud.microsoft', 'meta.ai', 'grok.com', 'chat.deepseek.com', 'chat.mistral.ai', 'you.com', 'phind.com', 'poe.com')
        OR (source_rule_id = 'utm_source' AND replaceRegexpOne(lower(source), '\\.(com|ai)$', '') IN ('chatgpt', 'openai', 'perplexity', 'claude', 'gemini', 'bard', 'copilot', 'grok', 'deepseek', 'mistral', 'phind', 'poe')), 'ai_assistant',
      source_rule_id IN ('facebook_referrer', 'social_referrer'), 'organic_social',
      source_rule_id = 'search_referrer', 'organic_search',
      source_rule_id = 'email_referrer', 'email',
      source_rule_id = 'utm_source' AND medium IN ('organic', 'search', 'seo', 'organic_search', 'organic-search', 'organic search'), 'organic_search',
      source_rule_id = 'utm_source' AND medium IN ('social', 'social-network', 'social_network', 'social network', 'social-media', 'social_media', 'social media', 'sm', 'organic_social', 'organic-social'), 'organic_social',
      source_rule_id = 'utm_source' AND medium IN ('email', 'e-mail', 'e_mail', 'mail', 'newsletter'), 'email',
      'referral')`;
