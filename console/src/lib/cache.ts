// The normalised cache's configuration (graphcache). Objects with an `id` are normalised by it; the ones
// below have none and live inside their parent. A mutation whose answer does not carry everything it
// changed says here what to update or invalidate (keep entries per screen together, alphabetical).
import type { Cache, CacheExchangeOpts } from '@urql/exchange-graphcache';
import { ShellDocument, type CreateOrganizationMutation } from '../graphql/generated';
import { screensEmbeddedTypes, screensMutationUpdates } from '../screens/parts/cache-updates';

const embedded = () => null;

/** The editor's and preview's reads of a project's consent; after a publish also the project's own consent field. */
function invalidateConsent(cache: Cache, projectId: string, published: boolean): void {
  for (const field of cache.inspectFields('Query')) {
    if (['consentConfiguration', 'consentPreview', 'consentExperience', 'consentVersions'].includes(field.fieldName) && field.arguments?.projectId === projectId) {
      cache.invalidate('Query', field.fieldKey);
    }
  }
  if (published) cache.invalidate({ __typename: 'Project', id: projectId }, 'consent');
}

export const cacheConfig: CacheExchangeOpts = {
  keys: {
    AllowedOrigins: embedded,
    BillingUsage: embedded,
    ConsentConfiguration: embedded,
    ConsentDraft: embedded,
    ConsentNotice: embedded,
    ConsentStats: embedded,
    ConsentStatsBucket: embedded,
    Entitlements: embedded,
    Me: embedded,
    OrganizationBilling: embedded,
    PageInfo: embedded,
    Success: embedded,
    // The TCF screen's types: the list and its pages have no id; declarations' ids repeat across kinds (purpose 1,
    // special feature 1), so they must not be normalised into one entity. TcfVendor and TcfAtp keep their ids.
    ConsentIssue: embedded,
    TcfDeclaration: embedded,
    TcfVendorList: embedded,
    TcfVendorConnection: embedded,
    TcfVendorConnectionEdge: embedded,
    TcfAtpConnection: embedded,
    TcfAtpConnectionEdge: embedded,
    // console-screens' types (screens/parts/cache-updates.ts)
    ...Object.fromEntries(screensEmbeddedTypes.map((type) => [type, embedded])),
  },
  updates: {
    Mutation: {
      // --- console-core: shell, organizations, projects, consent ---
      // The new organization joins the shell's list at once (the switcher and the address both need it).
      createOrganization: (result, _args, cache) => {
        const organization = (result.createOrganization as CreateOrganizationMutation['createOrganization'] | null)?.organization;
        if (!organization) return;
        cache.updateQuery({ query: ShellDocument }, (data) => (data ? { ...data, me: { ...data.me, organizations: [...data.me.organizations, organization] } } : data));
      },
      createProject: (result, args, cache) => {
        const project = (result.createProject as { project?: { __typename: string; id: string } } | null)?.project;
        const organization = { __typename: 'Organization', id: String(args.organizationId) };
        const projects = cache.resolve(organization, 'projects');
        if (project && Array.isArray(projects)) cache.link(organization, 'projects', [...(projects as string[]), cache.keyOfEntity(project)!]);
        else cache.invalidate(organization, 'projects');
      },
      logout: (_result, _args, cache) => cache.invalidate('Query', 'me'),
      publishConsent: (_result, args, cache) => invalidateConsent(cache, String(args.projectId), true),
      replaceConsentDraft: (_result, args, cache) => invalidateConsent(cache, String(args.projectId), false),
      updateConsentExperience: (_result, args, cache) => invalidateConsent(cache, String(args.projectId), false),
      // --- console-screens: add yours below ---
      ...screensMutationUpdates,
    },
  },
};
