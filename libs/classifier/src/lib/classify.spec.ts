import type { ClassifiedSource, ClassifyInput, Confidence, RuleId } from './types';
import { classify } from './classify';
import { RULE_IDS } from './rules';

type Expected = readonly [source: string, medium: string, confidence: Confidence, rule_id: RuleId, campaign?: string];
type Case = readonly [name: string, input: ClassifyInput, expected: Expected];

const SITE = 'https://shop.example.com';
/** A page URL on the site, with an optional query string. */
const page = (qs = ''): string => `${SITE}/landing${qs === '' ? '' : `?${qs}`}`;
/** Input with a plain page URL (no parameters) and the given referrer. */
const from = (referrer: string): ClassifyInput => ({ url: page(), referrer });
/** Input with the given query string and referrer. */
const qr = (qs: string, referrer?: string | null): ClassifyInput => ({ url: page(qs), referrer });

const expected = ([source, medium, confidence, rule_id, campaign]: Expected): ClassifiedSource =>
  campaign === undefined ? { source, medium, confidence, rule_id } : { source, medium, campaign, confidence, rule_id };

const clickId: Case[] = [
  ['gclid', qr('gclid=abc'), ['google', 'paid', 'high', 'click_id']],
  ['msclkid', qr('msclkid=abc'), ['bing', 'paid', 'high', 'click_id']],
  ['ttclid', qr('ttclid=abc'), ['tiktok', 'paid', 'high', 'click_id']],
  ['li_fat_id', qr('li_fat_id=abc'), ['linkedin', 'paid', 'high', 'click_id']],
  ['GCLID name is case-insensitive', qr('GCLID=abc'), ['google', 'paid', 'high', 'click_id']],
  ['MsClkId mixed case', qr('MsClkId=abc'), ['bing', 'paid', 'high', 'click_id']],
  ['gclid beats msclkid', qr('msclkid=1&gclid=2'), ['google', 'paid', 'high', 'click_id']],
  ['msclkid beats ttclid', qr('ttclid=1&msclkid=2'), ['bing', 'paid', 'high', 'click_id']],
  ['ttclid beats li_fat_id', qr('li_fat_id=1&ttclid=2'), ['tiktok', 'paid', 'high', 'click_id']],
  ['all four, reverse order in the URL', qr('li_fat_id=1&ttclid=2&msclkid=3&gclid=4'), ['google', 'paid', 'high', 'click_id']],
  ['empty gclid is absent', qr('gclid='), ['direct', 'direct', 'high', 'direct']],
  ['whitespace-only gclid is absent', qr('gclid=%20%20'), ['direct', 'direct', 'high', 'direct']],
  ['gclid without "=" is absent', qr('gclid'), ['direct', 'direct', 'high', 'direct']],
  ['empty gclid then a real one', qr('gclid=&gclid=abc'), ['google', 'paid', 'high', 'click_id']],
  ['empty gclid falls through to msclkid', qr('gclid=&msclkid=x'), ['bing', 'paid', 'high', 'click_id']],
  ['gclid beats a social referrer', qr('gclid=1', 'https://twitter.com/'), ['google', 'paid', 'high', 'click_id']],
  ['gclid beats fbclid + l.facebook.com', qr('fbclid=1&gclid=2', 'https://l.facebook.com/l.php'), ['google', 'paid', 'high', 'click_id']],
  ['gclid beats utm_source', qr('gclid=1&utm_source=newsletter&utm_medium=email'), ['google', 'paid', 'high', 'click_id']],
  ['gclid beats paid utm_medium', qr('gclid=1&utm_source=bing&utm_medium=cpc'), ['google', 'paid', 'high', 'click_id']],
  ['gclid beats an internal referrer', qr('gclid=1', `${SITE}/cart`), ['google', 'paid', 'high', 'click_id']],
  ['msclkid with a bing referrer', qr('msclkid=1', 'https://www.bing.com/'), ['bing', 'paid', 'high', 'click_id']],
  ['li_fat_id with a linkedin referrer', qr('li_fat_id=1', 'https://www.linkedin.com/feed/'), ['linkedin', 'paid', 'high', 'click_id']],
  ['ttclid with utm_source=tiktok', qr('ttclid=1&utm_source=tiktok&utm_medium=paid_social'), ['tiktok', 'paid', 'high', 'click_id']],
  ['gclid in the fragment is ignored', { url: `${SITE}/#gclid=1` }, ['direct', 'direct', 'high', 'direct']],
  ['gclid in the referrer query is ignored', { url: page(), referrer: 'https://www.google.com/?gclid=1' }, ['google', 'organic', 'medium', 'search_referrer']],
  ['path-only url', { url: '/landing?gclid=1' }, ['google', 'paid', 'high', 'click_id']],
  ['scheme-less url', { url: 'shop.example.com/landing?gclid=1' }, ['google', 'paid', 'high', 'click_id']],
  ['gclid=0 is a value', qr('gclid=0'), ['google', 'paid', 'high', 'click_id']],
  ['gbraid is not a recognised click id', qr('gbraid=1'), ['direct', 'direct', 'high', 'direct']],
  ['gclid with campaign', qr('gclid=1&utm_campaign=Spring_Sale'), ['google', 'paid', 'high', 'click_id', 'Spring_Sale']],
];

const fbclidAdReferrer: Case[] = [
  ['fbclid + l.facebook.com', qr('fbclid=x', 'https://l.facebook.com/'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['fbclid + lm.facebook.com', qr('fbclid=x', 'https://lm.facebook.com/l.php?u=x'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['uppercase host and port', qr('fbclid=x', 'HTTPS://L.FACEBOOK.COM:443/'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['http scheme', qr('fbclid=x', 'http://l.facebook.com/l.php?u=https%3A%2F%2Fshop.example.com'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['scheme-less l.facebook.com', qr('fbclid=x', 'l.facebook.com/'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['beats utm_source=instagram (rule 3)', qr('fbclid=x&utm_source=instagram', 'https://l.facebook.com/'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['beats paid utm_medium (rule 4)', qr('fbclid=x&utm_source=google&utm_medium=cpc', 'https://l.facebook.com/'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['FBCLID name case-insensitive', qr('FBCLID=x', 'https://lm.facebook.com/'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer']],
  ['with campaign', qr('fbclid=x&utm_campaign=Retarget%20Q3', 'https://l.facebook.com/'), ['facebook', 'paid', 'high', 'fbclid_ad_referrer', 'Retarget Q3']],
  ['fbclid + l.instagram.com is not rule 2', qr('fbclid=x', 'https://l.instagram.com/'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + m.facebook.com is not rule 2', qr('fbclid=x', 'https://m.facebook.com/'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + a lookalike host is not rule 2', qr('fbclid=x', 'https://l.facebook.com.evil.example/'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['l.facebook.com without fbclid', from('https://l.facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['empty fbclid + l.facebook.com', qr('fbclid=', 'https://l.facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
];

const fbclidUtmSource: Case[] = [
  ['utm_source=facebook', qr('fbclid=x&utm_source=facebook'), ['facebook', 'paid', 'high', 'fbclid_utm_source']],
  ['utm_source=fb', qr('fbclid=x&utm_source=fb'), ['facebook', 'paid', 'high', 'fbclid_utm_source']],
  ['utm_source=instagram', qr('fbclid=x&utm_source=instagram'), ['instagram', 'paid', 'high', 'fbclid_utm_source']],
  ['utm_source=FB uppercase', qr('fbclid=x&utm_source=FB'), ['facebook', 'paid', 'high', 'fbclid_utm_source']],
  ['utm_source=Instagram, padded', qr('fbclid=x&utm_source=%20Instagram%20'), ['instagram', 'paid', 'high', 'fbclid_utm_source']],
  ['UTM_SOURCE=FaceBook, FBCLID', qr('FBCLID=x&UTM_SOURCE=FaceBook'), ['facebook', 'paid', 'high', 'fbclid_utm_source']],
  ['beats paid utm_medium (rule 4)', qr('fbclid=x&utm_source=fb&utm_medium=cpc'), ['facebook', 'paid', 'high', 'fbclid_utm_source']],
  ['instagram + facebook referrer', qr('fbclid=x&utm_source=instagram', 'https://www.facebook.com/'), ['instagram', 'paid', 'high', 'fbclid_utm_source']],
  ['with a search referrer', qr('fbclid=x&utm_source=facebook', 'https://www.google.com/'), ['facebook', 'paid', 'high', 'fbclid_utm_source']],
  ['with campaign', qr('fbclid=x&utm_source=fb&utm_campaign=Launch'), ['facebook', 'paid', 'high', 'fbclid_utm_source', 'Launch']],
  ['utm_source=ig is not one of the three', qr('fbclid=x&utm_source=ig'), ['ig', 'referral', 'high', 'utm_source']],
  ['utm_source=facebook without fbclid', qr('utm_source=facebook'), ['facebook', 'referral', 'high', 'utm_source']],
  ['utm_source=facebook&utm_medium=social without fbclid', qr('utm_source=facebook&utm_medium=social'), ['facebook', 'social', 'high', 'utm_source']],
  ['utm_source=fb&utm_medium=cpc without fbclid is rule 4', qr('utm_source=fb&utm_medium=cpc'), ['fb', 'paid', 'high', 'paid_utm_medium']],
];

const paidMedium: Case[] = [
  ['cpc', qr('utm_source=google&utm_medium=cpc'), ['google', 'paid', 'high', 'paid_utm_medium']],
  ['paid', qr('utm_source=google&utm_medium=paid'), ['google', 'paid', 'high', 'paid_utm_medium']],
  ['paid_social', qr('utm_source=twitter&utm_medium=paid_social'), ['twitter', 'paid', 'high', 'paid_utm_medium']],
  ['cpm', qr('utm_source=dv360&utm_medium=cpm'), ['dv360', 'paid', 'high', 'paid_utm_medium']],
  ['display', qr('utm_source=criteo&utm_medium=display'), ['criteo', 'paid', 'high', 'paid_utm_medium']],
  ['retargeting', qr('utm_source=adroll&utm_medium=retargeting'), ['adroll', 'paid', 'high', 'paid_utm_medium']],
  ['CPC uppercase', qr('utm_source=Google&utm_medium=CPC'), ['google', 'paid', 'high', 'paid_utm_medium']],
  ['padded Paid_Social', qr('utm_source=reddit&utm_medium=%20Paid_Social%20'), ['reddit', 'paid', 'high', 'paid_utm_medium']],
  ['UTM_MEDIUM name', qr('UTM_SOURCE=Quora&UTM_MEDIUM=Cpm'), ['quora', 'paid', 'high', 'paid_utm_medium']],
  ['utm_source with spaces is only lowercased', qr('utm_source=Google+Ads&utm_medium=cpc'), ['google ads', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: search referrer name', qr('utm_medium=cpc', 'https://www.google.co.uk/'), ['google', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: social referrer name', qr('utm_medium=cpc', 'https://t.co/abc'), ['twitter', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: facebook referrer', qr('utm_medium=paid_social', 'https://www.facebook.com/'), ['facebook', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: webmail referrer -> email', qr('utm_medium=display', 'https://mail.google.com/'), ['email', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: ESP referrer -> email', qr('utm_medium=retargeting', 'https://us1.list-manage.com/track/click'), ['email', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: unknown referrer slug', qr('utm_medium=cpc', 'https://news.ycombinator.com/item?id=1'), ['news-ycombinator-com', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: internal referrer gives its slug', qr('utm_medium=cpc', `${SITE}/cart`), ['shop-example-com', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: referral-only host gives its slug', qr('utm_medium=cpc', 'https://docs.google.com/document/d/1'), ['docs-google-com', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source: app referrer', qr('utm_medium=cpc', 'android-app://com.google.android.gm/'), ['email', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source, no referrer -> unknown', qr('utm_medium=cpc'), ['unknown', 'paid', 'high', 'paid_utm_medium']],
  ['no utm_source, garbage referrer -> unknown', qr('utm_medium=cpc', 'not a url'), ['unknown', 'paid', 'high', 'paid_utm_medium']],
  ['empty utm_source counts as absent', qr('utm_source=&utm_medium=cpc', 'https://www.bing.com/'), ['bing', 'paid', 'high', 'paid_utm_medium']],
  ['fbclid + cpc + utm_source=google', qr('fbclid=x&utm_source=google&utm_medium=cpc'), ['google', 'paid', 'high', 'paid_utm_medium']],
  ['fbclid + cpc, no utm_source, facebook referrer', qr('fbclid=x&utm_medium=cpc', 'https://www.facebook.com/'), ['facebook', 'paid', 'high', 'paid_utm_medium']],
  ['fbclid + cpc, no utm_source, no referrer', qr('fbclid=x&utm_medium=cpc'), ['unknown', 'paid', 'high', 'paid_utm_medium']],
  ['fbclid + utm_source=ig + paid_social', qr('fbclid=x&utm_source=ig&utm_medium=paid_social'), ['ig', 'paid', 'high', 'paid_utm_medium']],
  ['paid medium beats a social referrer', qr('utm_source=linkedin&utm_medium=paid_social', 'https://www.linkedin.com/'), ['linkedin', 'paid', 'high', 'paid_utm_medium']],
  ['ppc is not a paid medium', qr('utm_source=google&utm_medium=ppc'), ['google', 'ppc', 'high', 'utm_source']],
  ['paid-social (hyphen) is not a paid medium', qr('utm_source=meta&utm_medium=paid-social'), ['meta', 'paid-social', 'high', 'utm_source']],
  ['with campaign', qr('utm_source=google&utm_medium=cpc&utm_campaign=Brand%20-%20EN'), ['google', 'paid', 'high', 'paid_utm_medium', 'Brand - EN']],
];

const fbclidOnly: Case[] = [
  ['fbclid alone', qr('fbclid=IwAR123'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + facebook.com referrer', qr('fbclid=x', 'https://www.facebook.com/'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + search referrer', qr('fbclid=x', 'https://www.google.com/'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + internal referrer', qr('fbclid=x', `${SITE}/`), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + non-paid utm_medium, no utm_source', qr('fbclid=x&utm_medium=social'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + empty utm_source', qr('fbclid=x&utm_source='), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['FBCLID uppercase', qr('FBCLID=x'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['fbclid + garbage referrer', qr('fbclid=x', '::::'), ['facebook', 'paid', 'medium', 'fbclid_only']],
  ['with campaign', qr('fbclid=x&utm_campaign=Summer'), ['facebook', 'paid', 'medium', 'fbclid_only', 'Summer']],
];

const utmSource: Case[] = [
  ['source + medium', qr('utm_source=newsletter&utm_medium=email'), ['newsletter', 'email', 'high', 'utm_source']],
  ['source only -> referral medium', qr('utm_source=partner'), ['partner', 'referral', 'high', 'utm_source']],
  ['empty medium -> referral medium', qr('utm_source=partner&utm_medium='), ['partner', 'referral', 'high', 'utm_source']],
  ['values lowercased', qr('utm_source=Newsletter&utm_medium=Email'), ['newsletter', 'email', 'high', 'utm_source']],
  ['names case-insensitive', qr('UTM_Source=blog&Utm_Medium=post'), ['blog', 'post', 'high', 'utm_source']],
  ['plus is a space', qr('utm_source=Spring+Promo'), ['spring promo', 'referral', 'high', 'utm_source']],
  ['percent-decoded and trimmed', qr('utm_source=%20Partner%20&utm_medium=%09Affiliate%0A'), ['partner', 'affiliate', 'high', 'utm_source']],
  ['percent-encoded name', qr('utm%5Fsource=encoded'), ['encoded', 'referral', 'high', 'utm_source']],
  ['malformed escape kept as is', qr('utm_source=100%25+off%'), ['100% off%', 'referral', 'high', 'utm_source']],
  ['unicode value', qr('utm_source=%E6%96%B0%E8%81%9E'), ['新聞', 'referral', 'high', 'utm_source']],
  ['first non-empty occurrence wins', qr('utm_source=&utm_source=first&utm_source=second'), ['first', 'referral', 'high', 'utm_source']],
  ['beats a search referrer', qr('utm_source=newsletter&utm_medium=email', 'https://www.google.com/'), ['newsletter', 'email', 'high', 'utm_source']],
  ['beats a social referrer', qr('utm_source=buffer&utm_medium=social', 'https://t.co/x'), ['buffer', 'social', 'high', 'utm_source']],
  ['beats a webmail referrer', qr('utm_source=weekly', 'https://mail.google.com/'), ['weekly', 'referral', 'high', 'utm_source']],
  ['beats an internal referrer', qr('utm_source=banner&utm_medium=internal', `${SITE}/`), ['banner', 'internal', 'high', 'utm_source']],
  ['fbclid + other utm_source', qr('fbclid=x&utm_source=newsletter&utm_medium=email'), ['newsletter', 'email', 'high', 'utm_source']],
  ['utm_medium=email with source', qr('utm_source=mailchimp&utm_medium=email'), ['mailchimp', 'email', 'high', 'utm_source']],
  ['utm_source with utm_term and utm_content', qr('utm_source=x&utm_term=shoes&utm_content=hero'), ['x', 'referral', 'high', 'utm_source']],
  ['params after a fragment are ignored', { url: `${SITE}/?utm_source=a#utm_source=b` }, ['a', 'referral', 'high', 'utm_source']],
  ['semicolon is not a separator', qr('utm_source=a;utm_medium=b'), ['a;utm_medium=b', 'referral', 'high', 'utm_source']],
  ['with campaign (case preserved, trimmed)', qr('utm_source=nl&utm_medium=email&utm_campaign=%20Black+Friday%20'), ['nl', 'email', 'high', 'utm_source', 'Black Friday']],
];

const facebookReferrer: Case[] = [
  ['facebook.com', from('https://facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['www.facebook.com', from('https://www.facebook.com/some.page'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['m.facebook.com', from('https://m.facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['mobile.facebook.com', from('https://mobile.facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['lm.facebook.com without fbclid', from('https://lm.facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['business.facebook.com', from('https://business.facebook.com/latest'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['fb.com', from('https://fb.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['fb.me', from('https://fb.me/abc'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['messenger.com', from('https://www.messenger.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['m.me', from('https://m.me/page'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['uppercase + port', from('https://WWW.FACEBOOK.COM:8443/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['android app', from('android-app://com.facebook.katana/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['with non-paid utm_medium only', qr('utm_medium=social', 'https://www.facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer']],
  ['with campaign', qr('utm_campaign=launch', 'https://www.facebook.com/'), ['facebook', 'social', 'medium', 'facebook_referrer', 'launch']],
];

const social = (referrer: string, name: string): Case => [`${referrer} -> ${name}`, from(referrer), [name, 'social', 'medium', 'social_referrer']];
const socialReferrer: Case[] = [
  social('https://twitter.com/', 'twitter'),
  social('https://x.com/someone/status/1', 'twitter'),
  social('https://t.co/abc', 'twitter'),
  social('https://mobile.twitter.com/', 'twitter'),
  social('https://www.linkedin.com/feed/', 'linkedin'),
  social('https://lnkd.in/abc', 'linkedin'),
  social('https://uk.linkedin.com/in/someone', 'linkedin'),
  social('https://www.instagram.com/', 'instagram'),
  social('https://l.instagram.com/?u=x', 'instagram'),
  social('https://www.youtube.com/watch?v=1', 'youtube'),
  social('https://m.youtube.com/', 'youtube'),
  social('https://youtu.be/abc', 'youtube'),
  social('https://www.reddit.com/r/x', 'reddit'),
  social('https://old.reddit.com/', 'reddit'),
  social('https://out.reddit.com/t3_x', 'reddit'),
  social('https://www.pinterest.com/', 'pinterest'),
  social('https://pin.it/x', 'pinterest'),
  social('https://www.pinterest.co.uk/', 'pinterest'),
  social('https://de.pinterest.com/', 'pinterest'),
  social('https://www.tiktok.com/@x', 'tiktok'),
  social('https://vm.tiktok.com/x', 'tiktok'),
  social('https://www.threads.net/@x', 'threads'),
  social('https://www.threads.com/@x', 'threads'),
  social('https://mastodon.social/@x', 'mastodon'),
  social('https://fosstodon.org/@x', 'mastodon'),
  social('https://hachyderm.io/@x', 'mastodon'),
  social('https://infosec.exchange/@x', 'mastodon'),
  social('https://bsky.app/profile/x', 'bluesky'),
  social('https://vk.com/x', 'vk'),
  social('https://m.vk.com/x', 'vk'),
  social('https://weibo.com/x', 'weibo'),
  social('https://www.snapchat.com/', 'snapchat'),
  social('https://discord.com/channels/1', 'discord'),
  social('https://discord.gg/x', 'discord'),
  social('https://t.me/channel', 'telegram'),
  social('https://web.telegram.org/k/', 'telegram'),
  social('https://wa.me/123', 'whatsapp'),
  social('https://web.whatsapp.com/', 'whatsapp'),
  social('https://www.quora.com/q', 'quora'),
  social('https://x.tumblr.com/post/1', 'tumblr'),
  social('https://stackoverflow.com/questions/1', 'stackoverflow'),
  social('https://superuser.com/q/1', 'stackexchange'),
  social('https://medium.com/@x/post', 'medium'),
  social('https://someone.substack.com/p/post', 'substack'),
  social('https://www.producthunt.com/posts/x', 'producthunt'),
  social('https://slack-redir.net/link?url=x', 'slack'),
  social('https://app.slack.com/client/T1', 'slack'),
  social('https://teams.microsoft.com/', 'microsoft-teams'),
  social('https://ok.ru/group/1', 'odnoklassniki'),
  social('https://www.tripadvisor.co.uk/Hotel', 'tripadvisor'),
  social('https://lemmy.world/post/1', 'lemmy'),
  social('https://ask.fm/x', 'askfm'),
  social('https://zen.yandex.ru/x', 'dzen'),
  social('https://www.twitch.tv/x', 'twitch'),
  social('https://www.last.fm/music/x', 'lastfm'),
  social('https://my.mail.ru/x', 'mymailru'),
  social('android-app://com.linkedin.android/', 'linkedin'),
  social('android-app://org.telegram.messenger', 'telegram'),
  social('android-app://com.Slack/', 'slack'),
  ['with campaign', qr('utm_campaign=Thread', 'https://x.com/'), ['twitter', 'social', 'medium', 'social_referrer', 'Thread']],
];

const search = (referrer: string, name: string): Case => [`${referrer} -> ${name}`, from(referrer), [name, 'organic', 'medium', 'search_referrer']];
const searchReferrer: Case[] = [
  search('https://www.google.com/', 'google'),
  search('https://google.com/search?q=x', 'google'),
  search('https://www.google.co.uk/', 'google'),
  search('https://www.google.com.br/', 'google'),
  search('https://www.google.de/', 'google'),
  search('https://www.google.fr/', 'google'),
  search('https://www.google.co.jp/', 'google'),
  search('https://www.google.com.au/', 'google'),
  search('https://www.google.co.in/', 'google'),
  search('https://www.google.cat/', 'google'),
  search('https://news.google.com/articles/x', 'google'),
  search('https://WWW.GOOGLE.COM/', 'google'),
  search('https://www.google.com:443/', 'google'),
  search('https://www.google.com./', 'google'),
  search('google.com/search?q=x', 'google'),
  search('//www.google.de/', 'google'),
  search('android-app://com.google.android.googlequicksearchbox/https/www.google.com', 'google'),
  search('https://yandex.ru/search/?text=x', 'yandex'),
  search('https://yandex.com.tr/', 'yandex'),
  search('https://yandex.com/', 'yandex'),
  search('https://yandex.kz/', 'yandex'),
  search('https://ya.ru/', 'yandex'),
  search('https://www.bing.com/search?q=x', 'bing'),
  search('https://cn.bing.com/', 'bing'),
  search('https://search.yahoo.com/', 'yahoo'),
  search('https://uk.search.yahoo.com/', 'yahoo'),
  search('https://search.yahoo.co.jp/', 'yahoo'),
  search('https://www.yahoo.co.jp/', 'yahoo'),
  search('https://www.baidu.com/link?url=x', 'baidu'),
  search('https://m.baidu.com/', 'baidu'),
  search('https://duckduckgo.com/', 'duckduckgo'),
  search('https://html.duckduckgo.com/html/', 'duckduckgo'),
  search('https://www.ecosia.org/search?q=x', 'ecosia'),
  search('https://search.brave.com/search?q=x', 'brave'),
  search('https://www.qwant.com/', 'qwant'),
  search('https://www.startpage.com/', 'startpage'),
  search('https://search.naver.com/search.naver?query=x', 'naver'),
  search('https://m.search.naver.com/', 'naver'),
  search('https://search.seznam.cz/', 'seznam'),
  search('https://kagi.com/search?q=x', 'kagi'),
  search('https://www.sogou.com/', 'sogou'),
  search('https://www.so.com/s?q=x', '360search'),
  search('https://www.ask.com/web?q=x', 'ask'),
  search('https://search.aol.com/', 'aol'),
  search('https://www.mojeek.com/', 'mojeek'),
  search('https://yep.com/', 'yep'),
  search('https://swisscows.com/', 'swisscows'),
  search('https://metager.org/', 'metager'),
  search('https://www.dogpile.com/', 'dogpile'),
  search('https://you.com/search?q=x', 'youcom'),
  search('https://go.mail.ru/search?q=x', 'mailru'),
  search('https://suche.gmx.net/web?q=x', 'gmx'),
  search('https://so.360.cn/s?q=x', '360search'),
  ['with campaign', qr('utm_campaign=seo', 'https://www.google.com/'), ['google', 'organic', 'medium', 'search_referrer', 'seo']],
];

const email = (referrer: string): Case => [`${referrer} -> email`, from(referrer), ['email', 'email', 'medium', 'email_referrer']];
const emailReferrer: Case[] = [
  email('https://mail.google.com/mail/u/0/'),
  email('https://MAIL.GOOGLE.COM/'),
  email('https://outlook.live.com/mail/0/'),
  email('https://outlook.office.com/mail/'),
  email('https://outlook.office365.com/owa/'),
  email('https://mail.yahoo.com/d/folders/1'),
  email('https://uk.mail.yahoo.com/'),
  email('https://mail.yahoo.co.jp/'),
  email('https://mail.aol.com/'),
  email('https://mail.proton.me/u/0/inbox'),
  email('https://mail.zoho.com/'),
  email('https://app.fastmail.com/mail/'),
  email('https://mail.yandex.ru/'),
  email('https://e.mail.ru/inbox/'),
  email('https://mail.qq.com/'),
  email('https://us1.list-manage.com/track/click?u=1'),
  email('https://mailchi.mp/x/y'),
  email('https://u123.ct.sendgrid.net/ls/click'),
  email('https://trk.klclick.com/ls/click'),
  email('https://d1.na1.hubspotlinks.com/Ctc/x'),
  email('https://nam12.safelinks.protection.outlook.com/?url=x'),
  email('https://r20.rs6.net/tn.jsp'),
  email('https://click.convertkit-mail2.com/x'),
  email('https://r.us-east-1.awstrack.me/L0/x'),
  email('https://www.gmx.net/'),
  email('https://navigator.gmx.de/'),
  email('android-app://com.google.android.gm/'),
  email('android-app://com.microsoft.office.outlook/'),
  ['with campaign', qr('utm_campaign=digest', 'https://mail.google.com/'), ['email', 'email', 'medium', 'email_referrer', 'digest']],
];

const internal: Case[] = [
  ['same host', { url: `${SITE}/b`, referrer: `${SITE}/a` }, ['internal', 'direct', 'high', 'internal']],
  ['www. on the referrer only', { url: 'https://example.com/b', referrer: 'https://www.example.com/a' }, ['internal', 'direct', 'high', 'internal']],
  ['www. on the url only', { url: 'https://www.example.com/b', referrer: 'https://example.com/a' }, ['internal', 'direct', 'high', 'internal']],
  ['port on the referrer', { url: 'https://example.com/b', referrer: 'https://example.com:8443/a' }, ['internal', 'direct', 'high', 'internal']],
  ['case differs', { url: 'https://Example.COM/b', referrer: 'https://EXAMPLE.com/a' }, ['internal', 'direct', 'high', 'internal']],
  ['http vs https', { url: 'https://example.com/b', referrer: 'http://example.com/a' }, ['internal', 'direct', 'high', 'internal']],
  ['requestHost when url is absent', { referrer: 'https://example.com/a', requestHost: 'example.com' }, ['internal', 'direct', 'high', 'internal']],
  ['requestHost with a port', { referrer: 'https://example.com/a', requestHost: 'example.com:3000' }, ['internal', 'direct', 'high', 'internal']],
  ['requestHost uppercase with www.', { referrer: 'https://example.com/a', requestHost: 'WWW.Example.com' }, ['internal', 'direct', 'high', 'internal']],
  ['requestHost when url is garbage', { url: 'garbage here', referrer: 'https://example.com/a', requestHost: 'example.com' }, ['internal', 'direct', 'high', 'internal']],
  ['requestHost when url is path-only', { url: '/b?x=1', referrer: 'https://example.com/a', requestHost: 'example.com:443' }, ['internal', 'direct', 'high', 'internal']],
  ['localhost with ports', { url: 'http://localhost:3000/b', referrer: 'http://localhost:3000/a' }, ['internal', 'direct', 'high', 'internal']],
  ['IPv6 request host', { referrer: 'http://[::1]:8080/a', requestHost: '[::1]:8080' }, ['internal', 'direct', 'high', 'internal']],
  ['url host wins over requestHost', { url: 'https://other.example/b', referrer: 'https://example.com/a', requestHost: 'example.com' }, ['example-com', 'referral', 'low', 'referral']],
  ['subdomain is not internal', { url: 'https://example.com/b', referrer: 'https://blog.example.com/a' }, ['blog-example-com', 'referral', 'low', 'referral']],
  ['parent domain is not internal', { url: 'https://shop.example.com/b', referrer: 'https://example.com/a' }, ['example-com', 'referral', 'low', 'referral']],
  ['lists come before internal', { url: 'https://www.google.com/x', referrer: 'https://www.google.com/' }, ['google', 'organic', 'medium', 'search_referrer']],
  ['app referrers are never internal', { url: 'https://com.example.app/', referrer: 'android-app://com.example.app/' }, ['com-example-app', 'referral', 'low', 'referral']],
  ['no request host at all', { referrer: 'https://example.com/a' }, ['example-com', 'referral', 'low', 'referral']],
  ['with campaign', { url: `${SITE}/b?utm_campaign=Nav`, referrer: `${SITE}/a` }, ['internal', 'direct', 'high', 'internal', 'Nav']],
];

const direct: Case[] = [
  ['empty input', {}, ['direct', 'direct', 'high', 'direct']],
  ['all null', { url: null, referrer: null, requestHost: null }, ['direct', 'direct', 'high', 'direct']],
  ['all undefined', { url: undefined, referrer: undefined, requestHost: undefined }, ['direct', 'direct', 'high', 'direct']],
  ['empty strings', { url: '', referrer: '', requestHost: '' }, ['direct', 'direct', 'high', 'direct']],
  ['whitespace strings', { url: '   ', referrer: ' \t ', requestHost: ' ' }, ['direct', 'direct', 'high', 'direct']],
  ['plain url', { url: page() }, ['direct', 'direct', 'high', 'direct']],
  ['unrelated params', { url: page('ref=abc&q=shoes&utm=1') }, ['direct', 'direct', 'high', 'direct']],
  ['empty utm values', { url: page('utm_source=&utm_medium=&utm_campaign=%20') }, ['direct', 'direct', 'high', 'direct']],
  ['utm in the fragment only', { url: `${SITE}/#utm_source=x` }, ['direct', 'direct', 'high', 'direct']],
  ['garbage url, no referrer', { url: 'not a url ?utm_source=x' }, ['direct', 'direct', 'high', 'direct']],
  ['garbage referrer', { url: page(), referrer: 'definitely not a url' }, ['direct', 'direct', 'high', 'direct']],
  ['referrer "http://"', { url: page(), referrer: 'http://' }, ['direct', 'direct', 'high', 'direct']],
  ['about:blank referrer', { url: page(), referrer: 'about:blank' }, ['direct', 'direct', 'high', 'direct']],
  ['file: referrer', { url: page(), referrer: 'file:///C:/page.html' }, ['direct', 'direct', 'high', 'direct']],
  ['chrome-extension: referrer', { url: page(), referrer: 'chrome-extension://abcdef/popup.html' }, ['direct', 'direct', 'high', 'direct']],
  ['javascript: referrer', { url: page(), referrer: 'javascript:alert(1)' }, ['direct', 'direct', 'high', 'direct']],
  ['android-app:// without a package', { url: page(), referrer: 'android-app://' }, ['direct', 'direct', 'high', 'direct']],
  ['path-only referrer', { url: page(), referrer: '/previous/page' }, ['direct', 'direct', 'high', 'direct']],
  ['requestHost alone', { requestHost: 'example.com' }, ['direct', 'direct', 'high', 'direct']],
  ['custom-scheme page url', { url: 'capacitor://localhost/home' }, ['direct', 'direct', 'high', 'direct']],
];

const referral: Case[] = [
  ['news.ycombinator.com', from('https://news.ycombinator.com/item?id=1'), ['news-ycombinator-com', 'referral', 'low', 'referral']],
  ['leading www. removed', from('https://www.example.org/post'), ['example-org', 'referral', 'low', 'referral']],
  ['only the leading www. is removed', from('https://www.www.example.org/'), ['www-example-org', 'referral', 'low', 'referral']],
  ['m. is kept in the slug', from('https://m.example.org/'), ['m-example-org', 'referral', 'low', 'referral']],
  ['country second-level domain', from('https://blog.example.co.uk/'), ['blog-example-co-uk', 'referral', 'low', 'referral']],
  ['port ignored', from('https://example.com:8080/x'), ['example-com', 'referral', 'low', 'referral']],
  ['uppercase host', from('https://Partner.Example.NET/'), ['partner-example-net', 'referral', 'low', 'referral']],
  ['hyphens kept, trailing dot dropped', from('https://my-site.example.com./'), ['my-site-example-com', 'referral', 'low', 'referral']],
  ['IDN host (punycode; "--" is one run)', from('https://bücher.de/'), ['xn-bcher-kva-de', 'referral', 'low', 'referral']],
  ['IPv4 host', from('http://192.168.0.1:8080/'), ['192-168-0-1', 'referral', 'low', 'referral']],
  ['IPv6 host', from('http://[2001:db8::1]/'), ['2001-db8-1', 'referral', 'low', 'referral']],
  ['scheme-less referrer', from('example.com/page'), ['example-com', 'referral', 'low', 'referral']],
  ['protocol-relative referrer', from('//partner.example.com/x'), ['partner-example-com', 'referral', 'low', 'referral']],
  ['unknown android app', from('android-app://com.example.reader/'), ['com-example-reader', 'referral', 'low', 'referral']],
  ['google.example.org is not google', from('https://google.example.org/'), ['google-example-org', 'referral', 'low', 'referral']],
  ['evil-google.com is not google', from('https://evil-google.com/'), ['evil-google-com', 'referral', 'low', 'referral']],
  ['google.net is not google', from('https://google.net/'), ['google-net', 'referral', 'low', 'referral']],
  ['google.ru.com is not google', from('https://google.ru.com/'), ['google-ru-com', 'referral', 'low', 'referral']],
  ['google.com.evil.example is not google', from('https://google.com.evil.example/'), ['google-com-evil-example', 'referral', 'low', 'referral']],
  ['notgoogle.com is not google', from('https://notgoogle.com/'), ['notgoogle-com', 'referral', 'low', 'referral']],
  ['facebook.com.evil.example is not facebook', from('https://facebook.com.evil.example/'), ['facebook-com-evil-example', 'referral', 'low', 'referral']],
  ['docs.google.com (referral-only list)', from('https://docs.google.com/document/d/1'), ['docs-google-com', 'referral', 'low', 'referral']],
  ['accounts.google.com (referral-only list)', from('https://accounts.google.com/'), ['accounts-google-com', 'referral', 'low', 'referral']],
  ['gemini.google.com (AI assistant)', from('https://gemini.google.com/app'), ['gemini-google-com', 'referral', 'low', 'referral']],
  ['chatgpt.com (AI assistant)', from('https://chatgpt.com/'), ['chatgpt-com', 'referral', 'low', 'referral']],
  ['perplexity.ai (AI assistant)', from('https://www.perplexity.ai/'), ['perplexity-ai', 'referral', 'low', 'referral']],
  ['github.com', from('https://github.com/org/repo'), ['github-com', 'referral', 'low', 'referral']],
  ['mail.ru portal root', from('https://mail.ru/'), ['mail-ru', 'referral', 'low', 'referral']],
  ['qq.com root', from('https://www.qq.com/'), ['qq-com', 'referral', 'low', 'referral']],
  ['brave.com (the browser site, not search)', from('https://brave.com/'), ['brave-com', 'referral', 'low', 'referral']],
  ['only utm_campaign, no referrer -> unknown', qr('utm_campaign=spring'), ['unknown', 'referral', 'low', 'referral', 'spring']],
  ['only utm_medium, no referrer -> unknown', qr('utm_medium=email'), ['unknown', 'referral', 'low', 'referral']],
  ['only utm_term -> unknown', qr('utm_term=shoes'), ['unknown', 'referral', 'low', 'referral']],
  ['utm_campaign + garbage referrer -> unknown', qr('utm_campaign=x', '%%%'), ['unknown', 'referral', 'low', 'referral', 'x']],
  ['utm_medium without source does not change a referral', qr('utm_medium=email', 'https://news.ycombinator.com/'), ['news-ycombinator-com', 'referral', 'low', 'referral']],
  ['with campaign', qr('utm_campaign=HN%20Launch', 'https://news.ycombinator.com/'), ['news-ycombinator-com', 'referral', 'low', 'referral', 'HN Launch']],
];

const malformed: Case[] = [
  ['invalid url host keeps params out', { url: 'https://exa mple.com/?gclid=1' }, ['direct', 'direct', 'high', 'direct']],
  ['url "::::"', { url: '::::' }, ['direct', 'direct', 'high', 'direct']],
  ['url "http://"', { url: 'http://', referrer: 'https://t.co/' }, ['twitter', 'social', 'medium', 'social_referrer']],
  ['url "?" only', { url: '?' }, ['direct', 'direct', 'high', 'direct']],
  ['url with only "&&&="', { url: page('&&&=&=x&') }, ['direct', 'direct', 'high', 'direct']],
  ['url with a bad port', { url: 'https://example.com:99999/?utm_source=x' }, ['direct', 'direct', 'high', 'direct']],
  ['referrer with a bad port', { url: page(), referrer: 'https://google.com:99999/' }, ['direct', 'direct', 'high', 'direct']],
  ['referrer "%%%"', { url: page(), referrer: '%%%' }, ['direct', 'direct', 'high', 'direct']],
  ['referrer "https://"', { url: page(), referrer: 'https://' }, ['direct', 'direct', 'high', 'direct']],
  ['referrer mailto:', { url: page(), referrer: 'mailto:someone@example.com' }, ['direct', 'direct', 'high', 'direct']],
  ['referrer data:', { url: page(), referrer: 'data:text/html,<a href=x>x</a>' }, ['direct', 'direct', 'high', 'direct']],
  ['referrer with spaces around', { url: page(), referrer: '  https://www.google.com/  ' }, ['google', 'organic', 'medium', 'search_referrer']],
  ['url with spaces around', { url: `  ${page('gclid=1')}  ` }, ['google', 'paid', 'high', 'click_id']],
  ['very long utm_source', qr(`utm_source=${'a'.repeat(5000)}`), ['a'.repeat(5000), 'referral', 'high', 'utm_source']],
  ['non-string url (runtime)', { url: 42 as unknown as string }, ['direct', 'direct', 'high', 'direct']],
  ['non-string referrer (runtime)', { referrer: { href: 'https://google.com' } as unknown as string }, ['direct', 'direct', 'high', 'direct']],
  ['null input (runtime)', null as unknown as ClassifyInput, ['direct', 'direct', 'high', 'direct']],
  ['undefined input (runtime)', undefined as unknown as ClassifyInput, ['direct', 'direct', 'high', 'direct']],
  ['requestHost garbage', { referrer: 'https://example.com/', requestHost: 'exa mple:port' }, ['example-com', 'referral', 'low', 'referral']],
];

const groups: Record<string, Case[]> = {
  '1 click_id': clickId,
  '2 fbclid_ad_referrer': fbclidAdReferrer,
  '3 fbclid_utm_source': fbclidUtmSource,
  '4 paid_utm_medium': paidMedium,
  '5 fbclid_only': fbclidOnly,
  '6 utm_source': utmSource,
  '7 facebook_referrer': facebookReferrer,
  '8 social_referrer': socialReferrer,
  '9 search_referrer': searchReferrer,
  '10 email_referrer': emailReferrer,
  '11 internal': internal,
  '12 direct': direct,
  '13 referral': referral,
  'malformed input': malformed,
};
const allCases: Case[] = Object.values(groups).flat();

describe('classify', () => {
  for (const [group, cases] of Object.entries(groups)) {
    describe(group, () => {
      it.each(cases.map((c) => [c[0], c] as const))('%s', (_name, [, input, exp]) => {
        expect(classify(input)).toStrictEqual(expected(exp));
      });
    });
  }

  it('has at least 200 table cases', () => {
    expect(allCases.length).toBeGreaterThanOrEqual(200);
  });

  it('reaches every rule_id from the table', () => {
    const reached = new Set(allCases.map(([, input]) => classify(input).rule_id));
    expect([...reached].sort()).toStrictEqual([...RULE_IDS].sort());
  });

  it('omits the campaign key when there is no utm_campaign', () => {
    for (const [, input, exp] of allCases) {
      if (exp[4] === undefined) expect(Object.keys(classify(input))).not.toContain('campaign');
    }
  });

  describe('campaign is carried by every rule', () => {
    // Adding a utm_campaign to an input must keep the result and add the campaign,
    // except for `direct`, which by definition has no utm_* parameter.
    const withCampaign = (input: ClassifyInput): ClassifyInput => {
      const url = typeof input.url === 'string' && input.url !== '' ? input.url : page();
      return { ...input, url: `${url}${url.includes('?') ? '&' : '?'}utm_campaign=%20Summer+Sale%20` };
    };
    const samples = allCases.filter(([, input, exp]) => exp[4] === undefined && exp[3] !== 'direct' && typeof input?.url === 'string' && input.url.startsWith(SITE) && !input.url.includes('#'));
    it.each(samples.map((c) => [c[0], c] as const))('%s', (_name, [, input, exp]) => {
      expect(classify(withCampaign(input))).toStrictEqual({ ...expected(exp), campaign: 'Summer Sale' });
    });
    it('covers every rule but direct', () => {
      expect(new Set(samples.map((c) => c[2][3])).size).toBe(RULE_IDS.length - 1);
    });
    it('turns a would-be direct visit into an unknown referral', () => {
      expect(classify({ url: page('utm_campaign=Summer') })).toStrictEqual({
        source: 'unknown',
        medium: 'referral',
        campaign: 'Summer',
        confidence: 'low',
        rule_id: 'referral',
      });
    });
  });

  it('returns a fresh object on every call', () => {
    const a = classify({});
    const b = classify({});
    expect(a).not.toBe(b);
  });

  it('falls back to an unknown referral when reading the input throws', () => {
    const hostile = Object.defineProperty({}, 'url', {
      get() {
        throw new Error('boom');
      },
    }) as ClassifyInput;
    expect(classify(hostile)).toStrictEqual({ source: 'unknown', medium: 'referral', confidence: 'low', rule_id: 'referral' });
  });
});
