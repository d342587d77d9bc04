import { addressBlock, registrationSource } from './oauth-register';

describe('the address a registration is counted under', () => {
  it.each([
    ['an IPv4 address as it is', '203.0.113.7', '203.0.113.7'],
    ['an IPv4 address seen through an IPv6 socket as the IPv4 one', '::ffff:203.0.113.7', '203.0.113.7'],
    ['a full IPv6 address as its /64', '2001:db8:a:b:1:2:3:4', '2001:db8:a:b::/64'],
    ['a compressed IPv6 address as its /64', '2001:db8::1', '2001:db8:0:0::/64'],
    ['another address of the same /64 as the same', '2001:0db8:000a:000b:ffff::9', '2001:db8:a:b::/64'],
    ['a link-local address with a zone as its /64', 'fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('takes %s', (_name, ip, block) => {
    expect(addressBlock(ip)).toBe(block);
  });

  it('keeps a keyed hash of the block: the same for one /64, another under another secret, never the address', () => {
    const a = registrationSource('2001:db8:a:b::1', 'secret-1');
    expect(registrationSource('2001:db8:a:b:ffff::2', 'secret-1')).toBe(a);
    expect(registrationSource('2001:db8:a:b::1', 'secret-2')).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
  });
});
