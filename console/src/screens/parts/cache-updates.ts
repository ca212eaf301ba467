// What the screens' mutations change beyond the objects they return (graphcache `updates.Mutation`,
// spread into lib/cache.ts). Lists and objects without an id are invalidated: the queries that read
// them fetch again, so every screen shows the change without a manual refetch.
import type { Cache, Data, UpdateResolver } from '@urql/exchange-graphcache';

/** Drops every cached variant (all arguments) of a field. */
export function invalidateField(cache: Cache, entity: Data | string, fieldName: string): void {
  for (const field of cache.inspectFields(entity)) {
    if (field.fieldName === fieldName) cache.invalidate(entity, field.fieldName, field.arguments ?? undefined);
  }
}

const project = (args: Record<string, unknown>) => ({ __typename: 'Project', id: String(args.projectId) });
const organization = (args: Record<string, unknown>) => ({ __typename: 'Organization', id: String(args.organizationId) });

export const screensMutationUpdates: Record<string, UpdateResolver> = {
  // keys
  createApiKey: (_r, args, cache) => invalidateField(cache, project(args), 'apiKeys'),
  // origins
  updateAllowedOrigins: (_r, args, cache) => cache.invalidate(project(args), 'allowedOrigins'),
  // webhook: it has no id, so the project's link to it is refreshed (deliveries included)
  putWebhook: (_r, args, cache) => cache.invalidate(project(args), 'webhook'),
  rotateWebhookSecret: (_r, args, cache) => cache.invalidate(project(args), 'webhook'),
  testWebhook: (_r, args, cache) => cache.invalidate(project(args), 'webhook'),
  // signed-in visitors: the secret's prefix and dates have no id of their own
  rotateSubjectSecret: (_r, args, cache) => cache.invalidate('Query', 'subjectSecret', { projectId: String(args.projectId) }),
  // notifications: the list and the layout's unread badge
  markNotificationRead: (_r, _args, cache) => invalidateField(cache, 'Query', 'notifications'),
  markAllNotificationsRead: (_r, _args, cache) => invalidateField(cache, 'Query', 'notifications'),
  // billing
  startTrial: (_r, args, cache) => cache.invalidate(organization(args), 'billing'),
  cancelSubscription: (_r, args, cache) => cache.invalidate(organization(args), 'billing'),
  // members: the list, and the shell's role (an Owner may have changed their own)
  // members: an addition is an invitation until the invitee accepts
  addMember: (_r, args, cache) => cache.invalidate(organization(args), 'invitations'),
  cancelInvitation: (_r, args, cache) => cache.invalidate(organization(args), 'invitations'),
  // the invitee's answer: their list, and on accepting the shell's organizations
  acceptInvitation: (_r, _args, cache) => {
    cache.invalidate('Query', 'invitations');
    cache.invalidate('Query', 'me');
  },
  declineInvitation: (_r, _args, cache) => cache.invalidate('Query', 'invitations'),
  changeMemberRole: (_r, args, cache) => {
    cache.invalidate(organization(args), 'members');
    cache.invalidate('Query', 'me');
  },
  removeMember: (_r, args, cache) => {
    cache.invalidate(organization(args), 'members');
    cache.invalidate('Query', 'me');
  },
  // scans: the list, the schedule, and the draft the add-to-draft action changed
  startScan: (_r, args, cache) => invalidateField(cache, project(args), 'scans'),
  setScanSchedule: (_r, _args, cache) => invalidateField(cache, 'Query', 'scanSchedule'),
  addCookiesToDraft: (_r, _args, cache) => {
    for (const field of ['consentConfiguration', 'consentExperience', 'consentPreview']) invalidateField(cache, 'Query', field);
  },
};

/** The screens' types without an `id`: they live inside their parent in the cache. */
export const screensEmbeddedTypes = [
  'AuditActor',
  'AuditLogPage',
  'BillingSubscription',
  'Checkout',
  'ConsentStatsCounts',
  'CreateApiKeyPayload',
  'EvidenceHashes',
  'MarkAllNotificationsReadPayload',
  'MarkNotificationReadPayload',
  'MemberPayload',
  'NotificationPage',
  'OrganizationAuditLogConnection',
  'OrganizationAuditLogConnectionEdge',
  'PlanPrices',
  'ProjectApiKeysConnection',
  'ProjectApiKeysConnectionEdge',
  'ProjectScansConnection',
  'ProjectScansConnectionEdge',
  'ProjectVersionsConnection',
  'ProjectVersionsConnectionEdge',
  'PublishEvidencePackage',
  'PublishEvidenceSummary',
  'ReceiptPage',
  'ReceiptSource',
  'RevokeApiKeyPayload',
  'ScanFinding',
  'ScanSchedule',
  'ScanSubject',
  'ErasedSubject',
  'SubjectSecret',
  'SubjectSecretWithSecret',
  'Webhook',
  'WebhookDeliveriesConnection',
  'WebhookDeliveriesConnectionEdge',
  'WebhookTestDelivery',
  'WebhookTestPayload',
  'WebhookWithSecret',
] as const;
