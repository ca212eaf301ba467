import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * How many proxies we control stand in front of the service (TRUST_PROXY): 0 = none,
 * the socket's peer is the client. `true` means one.
 */
export type TrustProxy = boolean | number;

const socketAddresses = new WeakMap<Socket, string>();

/**
 * The client's address as the rate limits count it, normalised by ipaddr.js (`::ffff:10.0.0.1` →
 * `10.0.0.1`), so one client has one key. An IPv6 client is its /64 network (`2001:db8:1:2::/64`):
 * one subscriber or host gets a whole /64 and could otherwise take a fresh allowance per address.
 *
 * Behind `n` trusted proxies it is the entry `n` hops from the RIGHT of X-Forwarded-For:
 * each proxy appends the address it saw, so everything to the left of that entry was
 * written by the client and can be anything. A header with fewer entries than proxies
 * (or an entry that is not an address) did not come through them as configured: the
 * socket address is used, never a value the client chose.
 */
export function clientAddress(req: IncomingMessage, trustProxy: TrustProxy): string {
  const hops = trustProxy === true ? 1 : trustProxy || 0;
  if (hops > 0) {
    const forwarded = req.headers['x-forwarded-for']; // node:http joins repeated headers with ", "
    if (forwarded) {
      const entries = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',');
      const seen = entries.length >= hops ? normalise(entries[entries.length - hops]!.trim()) : undefined;
      if (seen) return seen;
    }
  }
  return socketAddress(req.socket);
}

/** Once per connection: keep-alive clients (the SDK hot path) parse nothing per request. */
function socketAddress(socket: Socket): string {
  let address = socketAddresses.get(socket);
  if (address === undefined) {
    address = normalise(socket.remoteAddress ?? '') ?? 'unknown';
    socketAddresses.set(socket, address);
  }
  return address;
}

// Some proxies write `[v6]:port` or `v4:port`.
const WITH_PORT = /^\[([^\]]+)\](?::\d+)?$|^(\d+\.\d+\.\d+\.\d+):\d+$/;

function normalise(entry: string): string | undefined {
  const withPort = WITH_PORT.exec(entry);
  const address = withPort ? (withPort[1] ?? withPort[2]!) : entry;
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = (parsed as ipaddr.IPv6).parts.slice(0, 4).concat([0, 0, 0, 0]);
  return `${new ipaddr.IPv6(network).toString()}/64`;
}
