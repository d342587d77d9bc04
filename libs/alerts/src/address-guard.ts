import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** An outbound address the alerts may not reach (loopback, private, link-local, ...): refused at save and at send. */
export class OutboundRefused extends Error {}
/** A name that does not resolve (now): accepted at save, retried at send. */
export class UnresolvedHost extends OutboundRefused {}

/** How names are resolved (node's resolver; a test may pass its own). */
export type Resolve = (host: string) => Promise<Array<{ address: string; family: number }>>;
const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The range of an address when alerts may not reach it, or undefined. Only ipaddr.js's `unicast` (public) passes:
 * loopback, private, link-local, unique-local, unspecified, carrier-grade NAT, multicast, broadcast, reserved and the
 * IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo: checked as that address or refused) do not.
 */
export function refusedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an address';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

/** The host of a URL as a resolver takes it ([::1] -> ::1). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The address to connect to for `url`: its literal IP, or the first address its name resolves to, every one of them
 * checked (a name with one private address among public ones is refused: the connection must not choose). Throws
 * OutboundRefused. `allowPrivate` (ALERTS_ALLOW_PRIVATE_URLS=true) checks nothing and lets the system resolve.
 */
export async function checkedAddress(url: string, options: { allowPrivate: boolean; resolve?: Resolve }): Promise<{ address: string; family: 4 | 6 } | undefined> {
  if (options.allowPrivate) return undefined;
  const host = hostOf(new URL(url));
  const addresses = ipaddr.isValid(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await resolved(host, options.resolve ?? systemResolve);
  for (const a of addresses) {
    const range = refusedRange(a.address);
    if (range) throw new OutboundRefused(`${host} is ${a.address === host ? '' : `${a.address}, `}a ${range} address: alerts do not send into the operator's network (ALERTS_ALLOW_PRIVATE_URLS)`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

async function resolved(host: string, resolve: Resolve): Promise<Array<{ address: string; family: number }>> {
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await resolve(host);
  } catch (e) {
    throw new UnresolvedHost(`${host} does not resolve (${(e as { code?: string }).code ?? (e as Error).message})`);
  }
  if (addresses.length === 0) throw new UnresolvedHost(`${host} does not resolve`);
  return addresses;
}
