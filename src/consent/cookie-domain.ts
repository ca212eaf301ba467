import { getDomain } from 'tldts';
import { z } from 'zod';

// experience.cookieDomain (extensions.md section 12, docs/integrations.md): the domain the SDK keeps its
// first-party state cookie on, so that the subdomains of one site share the installation and the decision.
// The public-suffix check is tldts's (the maintained Public Suffix List, private suffixes such as github.io
// included): a cookie on a public suffix would be shared with unrelated sites, and browsers refuse it anyway.

const HOST = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

export const cookieDomainInput = z.string().superRefine((value, ctx) => {
  if (!HOST.test(value)) {
    ctx.addIssue({ code: 'custom', message: 'Must be a lowercase host name such as example.com (no scheme, port, path or leading dot; IDN in punycode)' });
    return;
  }
  // getDomain answers the registrable domain (example.com for www.example.com), null for a public suffix.
  const registrable = getDomain(value, { allowPrivateDomains: true });
  if (!registrable || !(value === registrable || value.endsWith(`.${registrable}`))) {
    ctx.addIssue({ code: 'custom', message: `${value} is a public suffix: a cookie there would reach unrelated sites` });
  }
});

/** The host an allowed origin serves (`https://*.example.com` serves below example.com), without its port. */
function originHost(origin: string): { host: string; wildcard: boolean } {
  const host = origin.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/:\d+$/, '');
  return host.startsWith('*.') ? { host: host.slice(2), wildcard: true } : { host, wildcard: false };
}

const under = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/**
 * Why a cookie domain does not fit the project's allowed origins, or undefined when it does: it must be the
 * host, or a parent, of every allowed origin of its site (the origins sharing its registrable domain), and of
 * at least one. Origins of other sites are left alone: they are reached with client.decorate(url).
 */
export function cookieDomainIssue(cookieDomain: string, allowedOrigins: string[]): string | undefined {
  const site = getDomain(cookieDomain, { allowPrivateDomains: true });
  const hosts = allowedOrigins.map(originHost).filter(({ host }) => getDomain(host, { allowPrivateDomains: true }) === site);
  if (!hosts.length) return `No allowed origin is on ${cookieDomain}: add the site's origins first (PUT /allowed-origins)`;
  // A wildcard's hosts are all below its base, so the base itself must be under the cookie domain.
  const outside = hosts.find(({ host }) => !under(host, cookieDomain));
  return outside && `${cookieDomain} is not the host or a parent of ${outside.wildcard ? '*.' : ''}${outside.host}: the SDK there could not read the cookie`;
}
