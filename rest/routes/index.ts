// The whole REST route table. Add a route group by adding its file here.
import type { RouteDef } from '../route.js';
import { auditRoutes } from './audit.js';
import { authRoutes } from './auth.js';
import { billingRoutes } from './billing.js';
import { consentRoutes } from './consent.js';
import { consoleRoutes } from './console.js';
import { evidenceRoutes } from './evidence.js';
import { keysRoutes } from './keys.js';
import { ledgerRoutes } from './ledger.js';
import { notificationsRoutes } from './notifications.js';
import { organizationRoutes } from './organizations.js';
import { probeRoutes } from './probes.js';
import { receiptsRoutes } from './receipts.js';
import { scansRoutes } from './scans.js';
import { sdkRoutes } from './sdk.js';
import { declarationRoutes } from './sdk-declaration.js';
import { sdkFileRoutes } from './sdk-files.js';
import { subjectsRoutes } from './subjects.js';
import { webhooksRoutes } from './webhooks.js';

export function allRoutes(startedAt: Date): RouteDef[] {
  return [
    ...tagged('probes', probeRoutes(startedAt)),
    ...tagged('auth', authRoutes),
    ...tagged('organizations', organizationRoutes),
    ...tagged('consent', consentRoutes),
    ...tagged('evidence', evidenceRoutes),
    ...tagged('keys', keysRoutes),
    ...tagged('sdk', sdkRoutes),
    ...tagged('sdk', declarationRoutes),
    ...tagged('sdk-files', sdkFileRoutes),
    ...tagged('receipts', receiptsRoutes),
    ...tagged('ledger', ledgerRoutes),
    ...tagged('webhooks', webhooksRoutes),
    ...tagged('subjects', subjectsRoutes),
    ...tagged('notifications', notificationsRoutes),
    ...tagged('billing', billingRoutes),
    ...tagged('audit', auditRoutes),
    ...tagged('scans', scansRoutes),
    // Last: its /console/:path* wildcard is tried after every other pattern.
    ...tagged('console', consoleRoutes()),
  ];
}

/** The OpenAPI tag of a route group (its file); a route may name its own. */
function tagged(tag: string, routes: RouteDef[]): RouteDef[] {
  return routes.map((route) => ({ tag, ...route }));
}
