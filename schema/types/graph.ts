// The nested operator graph (extensions.md §5): Organization and Project reach everything an
// operator reads, so a dashboard is one query. Each nested field needs the role of its REST
// route and is refused alone (its siblings still answer); lists that grow are Relay connections
// (first/after); every field loads through the request's DataLoaders (src/graph/loaders.ts).
import { getBilling } from '../../src/billing/service.js';
import { parseAuditFilter, readAuditEvents } from '../../src/audit/list.js';
import { DEFAULT_FIRST, MAX_FIRST, pageArgs, toConnection } from '../../src/graph/connection.js';
import { graphLoaders } from '../../src/graph/loaders.js';
import type { Role } from '../../src/generated/prisma/client.js';
import { builder } from '../builder.js';
import { OrganizationBilling } from './billing.js';
import { ConsentConfiguration, ConsentVersion } from './consent.js';
import { PublishEvidenceSummary } from './evidence.js';
import { AuditEvent } from './audit.js';
import { ApiKey } from './keys.js';
import { Invitation, OrganizationMember } from './members.js';
import { organizationInvitations } from '../../src/organizations/invitations.js';
import { Organization } from './organization.js';
import { Project } from './project.js';
import { Receipt } from './receipts.js';
import { AllowedOriginsRef, SdkRefusalRef } from './sdk.js';
import { listSdkRefusals } from '../../src/sdk/refusals.js';
import { consentStatsLoader, ConsentStatsRef, STATS_ARGS_DESCRIPTION, statsArgs } from './stats.js';
import { Webhook, WebhookDelivery } from './webhooks.js';
import { readScans } from '../../src/scanner/service.js';
import { Scan } from './scans.js';

// Relay connection types with their edge types. Fields return them through `t.field` with `first` and `after`
// only, instead of `t.connection`, which would also advertise `last` and `before`: every list here pages
// forwards from its start (src/graph/connection.ts), so the schema offers only what works.
const FIRST = `Page size, 1 to ${MAX_FIRST} (default ${DEFAULT_FIRST})`;
const AFTER = 'The endCursor of the previous page';
const AuditLogConnection = builder.connectionObject({ type: AuditEvent, name: 'OrganizationAuditLogConnection' }, { name: 'OrganizationAuditLogConnectionEdge' });
const DeliveriesConnection = builder.connectionObject({ type: WebhookDelivery, name: 'WebhookDeliveriesConnection' }, { name: 'WebhookDeliveriesConnectionEdge' });
const VersionsConnection = builder.connectionObject({ type: ConsentVersion, name: 'ProjectVersionsConnection' }, { name: 'ProjectVersionsConnectionEdge' });
const ApiKeysConnection = builder.connectionObject({ type: ApiKey, name: 'ProjectApiKeysConnection' }, { name: 'ProjectApiKeysConnectionEdge' });
const ReceiptsConnection = builder.connectionObject({ type: Receipt, name: 'ProjectReceiptsConnection' }, { name: 'ProjectReceiptsConnectionEdge' });
const ScansConnection = builder.connectionObject({ type: Scan, name: 'ProjectScansConnection' }, { name: 'ProjectScansConnectionEdge' });

const onProject = (role: Role) => (project: { id: string }) => ({ projectRole: { projectId: project.id, role } });
const onOrganization = (role: Role) => (organization: { id: string }) => ({ orgRole: { orgId: organization.id, role } });

builder.objectFields(Organization, (t) => ({
  members: t.field({
    type: [OrganizationMember],
    nullable: true,
    description: 'Everyone with a role, oldest first (Admin or above: it lists colleagues’ e-mail addresses)',
    authScopes: onOrganization('ADMIN'),
    resolve: (organization, _args, ctx) => graphLoaders(ctx).members.load(organization.id),
  }),
  invitations: t.field({
    type: [Invitation],
    nullable: true,
    description: 'Pending invitations (addMember) not yet accepted, oldest first (Admin or above, as members)',
    authScopes: onOrganization('ADMIN'),
    resolve: (organization, _args, ctx) => organizationInvitations(ctx.services, organization.id),
  }),
  billing: t.field({
    type: OrganizationBilling,
    nullable: true,
    description: 'Plan, subscription, entitlements and usage (Viewer or above, as GET /billing)',
    authScopes: onOrganization('VIEWER'),
    resolve: (organization, _args, ctx) => getBilling(ctx.services, organization.id),
  }),
  auditLog: t.field({
    type: AuditLogConnection,
    nullable: true,
    description:
      'Operator mutations, newest first (Admin or above, as GET /audit-log); `action` must be a known action name. ' +
      'Not batched: read it per organization',
    authScopes: onOrganization('ADMIN'),
    args: { first: t.arg.int({ description: FIRST }), after: t.arg.string({ description: AFTER }), projectId: t.arg.id(), action: t.arg.string() },
    resolve: async (organization, args, ctx) => {
      const page = pageArgs(args);
      const filter = parseAuditFilter({ projectId: args.projectId, action: args.action });
      const rows = await readAuditEvents(ctx.prisma, organization.id, { ...filter, after: page.after, take: page.first + 1 });
      return toConnection(rows, page, (event) => ({ at: event.createdAt, id: event.id }));
    },
  }),
}));

builder.objectFields(Webhook, (t) => ({
  deliveries: t.field({
    type: DeliveriesConnection,
    args: { first: t.arg.int({ description: FIRST }), after: t.arg.string({ description: AFTER }) },
    description: 'Delivery attempts, newest first (Viewer or above, as GET /webhook/deliveries)',
    authScopes: (webhook) => onProject('VIEWER')({ id: webhook.projectId }),
    nullable: true,
    resolve: (webhook, args, ctx) => graphLoaders(ctx).deliveries.load({ parentId: webhook.projectId, ...pageArgs(args) }),
  }),
}));

builder.objectFields(Project, (t) => ({
  organization: t.field({
    type: Organization,
    resolve: async (project, _args, ctx) => (await graphLoaders(ctx).organization.load(project.organizationId))!,
  }),
  consent: t.field({
    type: ConsentConfiguration,
    nullable: true,
    description: 'The draft, the latest published version and whether they differ (Viewer or above, as GET /consent)',
    authScopes: onProject('VIEWER'),
    resolve: (project, _args, ctx) => graphLoaders(ctx).consent.load(project.id),
  }),
  versions: t.field({
    type: VersionsConnection,
    args: { first: t.arg.int({ description: FIRST }), after: t.arg.string({ description: AFTER }) },
    nullable: true,
    description: 'Published versions, newest first (Viewer or above)',
    authScopes: onProject('VIEWER'),
    resolve: (project, args, ctx) => graphLoaders(ctx).versions.load({ parentId: project.id, ...pageArgs(args) }),
  }),
  apiKeys: t.field({
    type: ApiKeysConnection,
    args: { first: t.arg.int({ description: FIRST }), after: t.arg.string({ description: AFTER }) },
    nullable: true,
    description: 'Publishable keys, oldest first (Viewer or above, as GET /keys)',
    authScopes: onProject('VIEWER'),
    resolve: (project, args, ctx) => graphLoaders(ctx).apiKeys.load({ parentId: project.id, ...pageArgs(args) }),
  }),
  allowedOrigins: t.field({
    type: AllowedOriginsRef,
    nullable: true,
    description: 'Browser origins allowed to use the project’s keys (Viewer or above)',
    authScopes: onProject('VIEWER'),
    resolve: (project) => ({ enforce: project.enforceOrigins, origins: project.allowedOrigins }),
  }),
  sdkRefusals: t.field({
    type: [SdkRefusalRef],
    nullable: true,
    description: 'What the SDK API last refused from the project’s sites, one per kind, newest first (Viewer or above; the console’s go-live checklist)',
    authScopes: onProject('VIEWER'),
    resolve: (project, _args, ctx) => listSdkRefusals(ctx.services, project.id),
  }),
  webhook: t.field({
    type: Webhook,
    nullable: true,
    description: 'The webhook, null when none is configured (Viewer or above)',
    authScopes: onProject('VIEWER'),
    resolve: (project, _args, ctx) => graphLoaders(ctx).webhook.load(project.id),
  }),
  receipts: t.field({
    type: ReceiptsConnection,
    args: { first: t.arg.int({ description: FIRST }), after: t.arg.string({ description: AFTER }) },
    nullable: true,
    description: 'Consent receipts, newest first (Viewer or above, as GET /receipts)',
    authScopes: onProject('VIEWER'),
    resolve: (project, args, ctx) => graphLoaders(ctx).receipts.load({ parentId: project.id, ...pageArgs(args) }),
  }),
  consentStats: t.field({
    type: ConsentStatsRef,
    nullable: true,
    description: `Consent analytics (Viewer or above, as GET /receipts/stats; projects asking the same range share one statement). ${STATS_ARGS_DESCRIPTION}`,
    args: { from: t.arg.string(), to: t.arg.string(), interval: t.arg.string(), versionId: t.arg.id(), platform: t.arg.string() },
    authScopes: onProject('VIEWER'),
    resolve: (project, args, ctx) => consentStatsLoader(ctx, statsArgs(args)).load(project.id),
  }),
  scans: t.field({
    type: ScansConnection,
    args: { first: t.arg.int({ description: FIRST }), after: t.arg.string({ description: AFTER }) },
    nullable: true,
    description: 'Site scans, newest first (Viewer or above, as GET /scans); pages and findings per scan. Not batched: read it per project',
    authScopes: onProject('VIEWER'),
    resolve: async (project, args, ctx) => {
      const page = pageArgs(args);
      const rows = await readScans(ctx.prisma, project.id, { after: page.after, take: page.first + 1 });
      return toConnection(rows, page, (scan) => ({ at: scan.createdAt, id: scan.id }));
    },
  }),
  evidence: t.field({
    type: [PublishEvidenceSummary],
    nullable: true,
    description: 'One evidence summary per published version, newest first (Viewer or above; every project in one statement)',
    authScopes: onProject('VIEWER'),
    resolve: (project, _args, ctx) => graphLoaders(ctx).evidence.load(project.id),
  }),
}));
