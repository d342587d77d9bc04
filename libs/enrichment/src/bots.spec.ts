import { AI_CRAWLERS } from './ai-crawlers';
import { aiCrawlerOf, botNameOf, serverLibraryOf } from './bots';
import { parseUserAgent } from './user-agent';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('bots: device_type bot, browser = the bot name', () => {
  it.each([
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Googlebot'],
    [
      'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.201 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Googlebot',
    ],
    ['Googlebot-Image/1.0', 'Googlebot-Image'],
    ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'bingbot'],
    ['Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)', 'YandexBot'],
    ['Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)', 'Baiduspider'],
    ['Mozilla/5.0 (compatible; DuckDuckBot-Https/1.1; https://duckduckgo.com/duckduckbot)', 'DuckDuckBot'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', 'GPTBot'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot', 'ChatGPT-User'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)', 'OAI-SearchBot'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', 'ClaudeBot'],
    ['Mozilla/5.0 (compatible; Claude-User/1.0; +Claude-User@anthropic.com)', 'Claude-User'],
    ['anthropic-ai', 'anthropic-ai'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)', 'PerplexityBot'],
    ['Mozilla/5.0 (compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)', 'Perplexity-User'],
    ['Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)', 'Bytespider'],
    ['CCBot/2.0 (https://commoncrawl.org/faq/)', 'CCBot'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)', 'Applebot'],
    ['Mozilla/5.0 (compatible; Applebot-Extended/0.1)', 'Applebot-Extended'],
    ['meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)', 'meta-externalagent'],
    ['Mozilla/5.0 (compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)', 'Amazonbot'],
    ['Mozilla/5.0 (compatible; cohere-ai)', 'cohere-ai'],
    ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', 'facebookexternalhit'],
    ['Twitterbot/1.0', 'Twitterbot'],
    ['LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)', 'LinkedInBot'],
    ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'Slackbot'],
    ['TelegramBot (like TwitterBot)', 'TelegramBot'],
    ['Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', 'AhrefsBot'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36', 'HeadlessChrome'],
    ['Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse', 'Chrome-Lighthouse'],
    ['Scrapy/2.11.0 (+https://scrapy.org)', 'Scrapy'],
    ['UptimeRobot/2.0', 'UptimeRobot'],
    ['Mozilla/5.0 (compatible; Foobot/3.1; +https://foo.example/bot)', 'Foobot'],
    ['SomeCrawler/1.0', 'SomeCrawler'],
  ])('%s -> %s', (ua, name) => {
    expect(botNameOf(ua)).toBe(name);
    expect(parseUserAgent(ua)).toMatchObject({ device_type: 'bot', browser: name });
  });
});

describe('not bots', () => {
  it.each([
    // server-side HTTP libraries: our sk_ callers, device_type other, browser = the library
    ['curl/8.5.0', 'curl'],
    ['node', 'node'],
    ['node-fetch/1.0 (+https://github.com/bitinn/node-fetch)', 'node-fetch'],
    ['node-fetch', 'node-fetch'],
    ['undici', 'undici'],
    ['axios/1.6.0', 'axios'],
    ['got (https://github.com/sindresorhus/got)', 'got'],
    ['Deno/1.40.0', 'Deno'],
    ['Bun/1.0.0', 'Bun'],
    ['Wget/1.21.4', 'Wget'],
    ['python-requests/2.31.0', 'python-requests'],
    ['Python-urllib/3.11', 'python-urllib'],
    ['python-httpx/0.27.0', 'python-httpx'],
    ['Python/3.11 aiohttp/3.9.1', 'aiohttp'],
    ['Go-http-client/1.1', 'Go-http-client'],
    ['Go-http-client/2.0', 'Go-http-client'],
    ['okhttp/4.12.0', 'okhttp'],
    ['Java/17.0.2', 'Java'],
    ['Apache-HttpClient/4.5.14 (Java/17.0.2)', 'Apache-HttpClient'],
    ['Dart/3.2 (dart:io)', 'Dart'],
    ['GuzzleHttp/7', 'GuzzleHttp'],
    ['ruby', 'ruby'],
    ['Faraday v2.7.4', 'Faraday'],
    ['libwww-perl/6.72', 'libwww-perl'],
    ['HTTPie/3.2.2', 'HTTPie'],
    ['PostmanRuntime/7.36.0', 'PostmanRuntime'],
  ])('server library %s -> other, %s', (ua, library) => {
    expect(serverLibraryOf(ua)).toBe(library);
    expect(parseUserAgent(ua)).toMatchObject({ device_type: 'other', browser: library });
  });

  it.each([
    [CHROME, 'desktop', 'Chrome', 'Windows'],
    [`${CHROME} Edg/124.0.0.0`, 'desktop', 'Edge', 'Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', 'desktop', 'Safari', 'Mac OS'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'desktop', 'Firefox', 'Linux'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1', 'mobile', 'Mobile Safari', 'iOS'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36', 'mobile', 'Chrome', 'Android'],
    ['Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1', 'tablet', 'Mobile Safari', 'iOS'],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/450.0.0.0;FBBV/1;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.0;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]',
      'mobile',
      'Facebook',
      'iOS',
    ],
  ])('browser %s -> %s %s %s', (ua, device_type, browser, os) => {
    expect(botNameOf(ua)).toBeUndefined();
    expect(parseUserAgent(ua)).toEqual({ device_type, browser, os });
  });
});

describe('aiCrawlerOf', () => {
  it.each([
    ['GPTBot', 'GPTBot'],
    ['ClaudeBot', 'ClaudeBot'],
    ['PerplexityBot', 'PerplexityBot'],
    ['Bytespider', 'Bytespider'],
    ['Googlebot', undefined],
    ['Chrome', undefined],
    ['gptbot', undefined],
    ['', undefined],
    [null, undefined],
  ])('%j -> %j', (browser, name) => {
    expect(aiCrawlerOf(browser)).toBe(name);
  });

  it('names every AI crawler as parseUserAgent stores it', () => {
    for (const { name } of AI_CRAWLERS) {
      const ua = `Mozilla/5.0 (compatible; ${name}/1.0; +https://example.com/bot)`;
      expect(parseUserAgent(ua)).toMatchObject({ device_type: 'bot', browser: name });
      expect(aiCrawlerOf(parseUserAgent(ua).browser)).toBe(name);
    }
  });
});
