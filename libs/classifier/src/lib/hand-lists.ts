/** Our hand-written host lists (data in ../data/*.json), before the package's hosts are merged in. */
import emailList from '../data/email.json';
import referralOnlyList from '../data/referral-only.json';
import searchList from '../data/search.json';
import socialList from '../data/social.json';
import type { HostListEntry, HostLists } from './host-matcher';

export const HAND_LISTS: HostLists = Object.freeze({
  social: socialList as readonly HostListEntry[],
  search: searchList as readonly HostListEntry[],
  email: emailList as readonly HostListEntry[],
  referral: referralOnlyList as readonly HostListEntry[],
});
