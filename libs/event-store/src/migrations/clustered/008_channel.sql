-- The channel of every event (libs/classifier channelOf, README "Channels"), written by the writer at ingest.
-- Rows stored before this migration get it from the DEFAULT expression below when read: the same rule order over the
-- stored source, medium, rule id and referrer, with the paid split and the AI assistants frozen to the best-known names
-- (channelOf knows more of both; events stored from now on carry its exact answer). Never recomputed on later reads.
-- events_local holds the column; the Distributed events names it with the same DEFAULT, which fills inserts that omit it.
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS channel LowCardinality(String) DEFAULT
  multiIf(
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
      'referral')
  AFTER source_rule_id;

ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS channel LowCardinality(String) DEFAULT
  multiIf(
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
      'referral')
  AFTER source_rule_id;
