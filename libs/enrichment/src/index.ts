export * from './ip-hash';
export * from './geo';
export * from './user-agent';
export { aiCrawlerOf } from './bots';
export { AI_CRAWLERS, type AiCrawler } from './ai-crawlers';
export * from './enrich';
export * from './imported';
