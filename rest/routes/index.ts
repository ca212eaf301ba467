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
import { sdkFileRoutes } from './sdk-files.js';
import { webhooksRoutes } from './webhooks.js';

export function allRoutes(startedAt: Date): RouteDef[] {
  return [
    ...probeRoutes(startedAt),
    ...authRoutes,
    ...organizationRoutes,
    ...consentRoutes,
    ...evidenceRoutes,
    ...keysRoutes,
    ...sdkRoutes,
    ...sdkFileRoutes,
    ...receiptsRoutes,
    ...ledgerRoutes,
    ...webhooksRoutes,
    ...notificationsRoutes,
    ...billingRoutes,
    ...auditRoutes,
    ...scansRoutes,
    // Last: its /console/:path* wildcard is tried after every other pattern.
    ...consoleRoutes(),
  ];
}
