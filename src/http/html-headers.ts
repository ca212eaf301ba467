/**
 * Headers for every HTML page the service serves (hosted preferences, mock checkout, evidence html):
 * the page's own CSP plus `frame-ancestors 'none'`, and `X-Frame-Options: DENY` for browsers that
 * ignore frame-ancestors, so no other site can frame a page and click through it.
 */
export function htmlPageHeaders(contentSecurityPolicy: string): Record<string, string> {
  return {
    'Content-Security-Policy': `${contentSecurityPolicy}; frame-ancestors 'none'`,
    'X-Frame-Options': 'DENY',
  };
}
