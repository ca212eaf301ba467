// The normalised cache's configuration (graphcache). Objects with an `id` are normalised by it; the ones
// below have none and live inside their parent. A mutation whose answer does not carry everything it
// changed says here what to update or invalidate (keep entries per screen together, alphabetical).
import type { CacheExchangeOpts } from '@urql/exchange-graphcache';
import { screensEmbeddedTypes, screensMutationUpdates } from '../screens/parts/cache-updates';

const embedded = () => null;

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
    // console-screens' types (screens/parts/cache-updates.ts)
    ...Object.fromEntries(screensEmbeddedTypes.map((type) => [type, embedded])),
  },
  updates: {
    Mutation: {
      // --- console-core: shell, organizations, projects, consent ---
      createOrganization: (_result, _args, cache) => cache.invalidate('Query', 'me'),
      createProject: (result, args, cache) => {
        const project = (result.createProject as { project?: { __typename: string; id: string } } | null)?.project;
        const organization = { __typename: 'Organization', id: String(args.organizationId) };
        const projects = cache.resolve(organization, 'projects');
        if (project && Array.isArray(projects)) cache.link(organization, 'projects', [...(projects as string[]), cache.keyOfEntity(project)!]);
        else cache.invalidate(organization, 'projects');
      },
      logout: (_result, _args, cache) => cache.invalidate('Query', 'me'),
      // --- console-screens: add yours below ---
      ...screensMutationUpdates,
    },
  },
};
