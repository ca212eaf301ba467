import { lookup } from 'node:dns';
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// ::a.b.c.d, the deprecated IPv4-compatible form: ipaddr.js calls it unicast, but `[::7f00:1]` is 127.0.0.1.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * Cloud platforms' own hosts at public unicast addresses, which answer only from inside that cloud and so reach
 * the platform, not the internet (docs/security.md lists each with its source). Their metadata services at
 * 169.254.169.254, fd00:ec2::254, 100.100.100.200 or 192.0.0.192 are already special-purpose ranges below.
 */
export const CLOUD_PLATFORM_HOSTS = [
  // Azure's WireServer: DNS, DHCP, VM agent, health probes (learn.microsoft.com, "What is IP address 168.63.129.16?").
  ipaddr.parseCIDR('168.63.129.16/32'),
  // IBM Cloud's service network (DNS resolvers 161.26.0.10/.11, NTP, provisioning) and its private cloud
  // service endpoints (cloud.ibm.com, "IBM Cloud IP ranges").
  ipaddr.parseCIDR('161.26.0.0/16'),
  ipaddr.parseCIDR('166.8.0.0/14'),
];

/**
 * The SSRF guard, in every environment: a webhook may only reach public unicast
 * addresses. ipaddr.js classifies an address into its IANA special-purpose
 * range; everything but plain `unicast` is refused: loopback (127/8, ::1),
 * unspecified (0/8, ::), private (10/8, 172.16/12, 192.168/16), carrier-grade
 * NAT (100.64/10, which also holds 100.100.100.200, a cloud metadata address),
 * link-local (169.254/16 with the 169.254.169.254 metadata service, fe80::/10),
 * unique-local (fc00::/7, with AWS's fd00:ec2::254), reserved (192.0.0.0/24 with
 * Oracle's 192.0.0.192), multicast, broadcast, and the IPv6 forms that embed an
 * IPv4 address (IPv4-mapped addresses are unwrapped and checked as IPv4;
 * IPv4-compatible, NAT64, 6to4 and Teredo are refused outright). Decimal and hex
 * hosts (`http://2852039166/`, `0xa9fea9fe`) reach us already written as dotted IPv4 by
 * the URL parser. Public unicast addresses that are a cloud platform's own (CLOUD_PLATFORM_HOSTS) are refused too. `allowLoopback` (development only) lets 127/8 and ::1 through.
 */
export function isAllowedAddress(address: string, allowLoopback = false): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE) && !['::', '::1'].includes(parsed.toString())) return false;
  const plain = ipaddr.process(address);
  const range = plain.range();
  if (range === 'unicast' && plain.kind() === 'ipv4' && CLOUD_PLATFORM_HOSTS.some((cidr) => plain.match(cidr))) return false;
  return range === 'unicast' || (allowLoopback && range === 'loopback');
}

export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(host: string, address: string) {
    super(host === address ? `address ${address} is not allowed` : `${host} resolves to ${address}, which is not allowed`);
  }
}

/** `[::1]` → `::1`: URL hostnames keep the brackets of IPv6 literals. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** Resolves a host name (or takes an IP literal) and refuses it unless every address is allowed. */
export async function assertPublicHost(hostname: string, allowLoopback = false): Promise<void> {
  const host = bareHost(hostname);
  const addresses = isIP(host) ? [host] : (await lookupAll(host)).map((entry) => entry.address);
  const blocked = addresses.find((address) => !isAllowedAddress(address, allowLoopback));
  if (blocked) throw new BlockedAddressError(host, blocked);
}

const lookupAll = (host: string) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    lookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` for the HTTP client that refuses private addresses at
 * connection time, so a host that resolved to a public address when it was
 * configured cannot later be rebound to an internal one: the address checked
 * is the address connected to. (Node skips `lookup` for IP literals, so callers
 * check those with assertPublicHost first.)
 */
export const guardedLookup =
  (allowLoopback: boolean) =>
  (host: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    lookup(host, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const blocked = addresses.find((entry) => !isAllowedAddress(entry.address, allowLoopback));
      if (blocked) return callback(new BlockedAddressError(host, blocked.address), []);
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
