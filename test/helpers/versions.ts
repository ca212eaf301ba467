import { createHash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { TestServer } from './server.js';

// Until consent publish lands, tests create published versions by inserting ConsentVersion rows the way
// decisions.md defines them: config = the SDK config's `config`, hashes over RFC 8785 canonical JSON.

export interface Category {
  id: string;
  name: string;
  sortOrder: number;
}
export interface Purpose {
  id: string;
  key: string;
  name: string;
  description: string;
  required: boolean;
  categoryId: string;
  sortOrder: number;
}
export interface Notice {
  title: string;
  description: string;
  acceptLabel: string;
  rejectLabel: string;
  manageLabel: string;
  companyName: string;
  logoUrl: string;
  primaryColor: string;
}
export interface VersionContent {
  categories: Category[];
  purposes: Purpose[];
  notice: Notice;
}

const sha256 = (value: unknown) => createHash('sha256').update(canonicalize(value)!).digest('hex');

export function consentHashOf(content: VersionContent): string {
  const categoryName = new Map(content.categories.map((c) => [c.id, c.name]));
  const purposes = [...content.purposes]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((p) => ({ key: p.key, name: p.name, description: p.description, required: p.required, category: categoryName.get(p.categoryId) }));
  return sha256({ purposes, notice: { title: content.notice.title, description: content.notice.description } });
}

export const contentHashOf = (number: number, config: VersionContent) => sha256({ number, config });

/** A small consent surface: one required purpose and two optional ones. */
export function sampleContent(overrides: Partial<Notice> = {}): VersionContent {
  const essential = { id: randomUUID(), name: 'Essential', sortOrder: 0 };
  const statistics = { id: randomUUID(), name: 'Statistics', sortOrder: 1 };
  return {
    categories: [essential, statistics],
    purposes: [
      { id: randomUUID(), key: 'necessary', name: 'Necessary', description: 'Keeps the site working', required: true, categoryId: essential.id, sortOrder: 0 },
      { id: randomUUID(), key: 'analytics', name: 'Analytics', description: 'Counts visits', required: false, categoryId: statistics.id, sortOrder: 1 },
      { id: randomUUID(), key: 'marketing', name: 'Marketing', description: 'Personalised ads', required: false, categoryId: statistics.id, sortOrder: 2 },
    ],
    notice: {
      title: 'We value your privacy',
      description: 'Choose what we may use.',
      acceptLabel: 'Accept all',
      rejectLabel: 'Reject all',
      manageLabel: 'Manage',
      companyName: 'Acme',
      logoUrl: '',
      primaryColor: '#0055ff',
      ...overrides,
    },
  };
}

export interface PublishedVersion {
  id: string;
  number: number;
  publishedAt: string;
  contentHash: string;
  consentHash: string;
  config: VersionContent;
}

/** Inserts the next published version of a project, as publish would. */
export async function publishVersion(
  server: TestServer,
  projectId: string,
  publishedById: string,
  content: VersionContent = sampleContent(),
): Promise<PublishedVersion> {
  const prisma = server.services.db.prisma;
  const latest = await prisma.consentVersion.findFirst({ where: { projectId }, orderBy: { number: 'desc' }, select: { number: true } });
  const number = (latest?.number ?? 0) + 1;
  const config = { purposes: content.purposes, categories: content.categories, notice: content.notice };
  const row = await prisma.consentVersion.create({
    data: {
      projectId,
      number,
      config: config as object,
      contentHash: contentHashOf(number, config),
      consentHash: consentHashOf(content),
      publishedById,
      publishedAt: server.services.now(),
    },
  });
  return { id: row.id, number, publishedAt: row.publishedAt.toISOString(), contentHash: row.contentHash, consentHash: row.consentHash, config };
}
