export * from './ip-hash';
export * from './geo';
export * from './user-agent';
export { AI_CRAWLERS, aiCrawlerOf, type AiCrawler } from './bots';
export * from './enrich';
