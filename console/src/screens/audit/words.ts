// The audit log's actions in words. Typed by the server's own list (src/audit/actions.ts), so an action added
// there without words here fails the typecheck.
import type { AuditAction } from '../../../../src/audit/actions';

export const ACTION_WORDS: Record<AuditAction, string> = {
  'organization.created': 'Created the organization',
  'project.created': 'Created a project',
  'project.updated': 'Renamed a project',
  'consent.category_created': 'Added a category',
  'consent.category_updated': 'Changed a category',
  'consent.category_deleted': 'Removed a category',
  'consent.purpose_created': 'Added a purpose',
  'consent.purpose_updated': 'Changed a purpose',
  'consent.purpose_deleted': 'Removed a purpose',
  'consent.notice_updated': 'Changed the notice',
  'consent.draft_replaced': 'Saved the consent draft',
  'consent.experience_updated': 'Saved the consent experience',
  'consent.published': 'Published a consent version',
  'api_key.created': 'Created a publishable key',
  'api_key.revoked': 'Revoked a publishable key',
  'allowed_origins.updated': 'Changed the allowed origins',
  'webhook.created': 'Set up the webhook',
  'webhook.updated': 'Changed the webhook',
  'webhook.secret_rotated': 'Rotated the webhook signing secret',
  'webhook.tested': 'Sent a webhook test event',
  'member.invited': 'Invited a member',
  'member.invitation_declined': 'Declined an invitation',
  'member.invitation_cancelled': 'Withdrew an invitation',
  'member.added': 'Joined (accepted an invitation)',
  'member.role_changed': 'Changed a member’s role',
  'member.removed': 'Removed a member',
  'member.left': 'Left the organization',
  'scan.started': 'Started a site scan',
  'scan.schedule_updated': 'Changed the scan schedule',
  'ledger.settings_updated': 'Changed the ledger settings',
  'billing.trial_started': 'Started a trial',
  'billing.checkout_started': 'Started a checkout',
  'billing.subscription_canceled': 'Canceled the subscription',
  'account.password_changed': 'Changed their password',
};

export const actionWords = (action: string): string => ACTION_WORDS[action as AuditAction] ?? action;
