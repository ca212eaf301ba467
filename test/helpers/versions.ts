import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'vitest';
import type { Operator } from './fixtures.js';
import type { TestServer } from './server.js';

// Published versions for the SDK tests, made through the real routes (PUT /consent, POST /consent/publish).
// The hash functions recompute decisions.md's definitions independently, so tests can check what the SDK serves.

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
export interface VersionConfig {
  purposes: Purpose[];
  categories: Category[];
  notice: Notice;
}

const sha256 = (value: unknown) => createHash('sha256').update(canonicalize(value)!).digest('hex');

/** decisions.md: SHA-256 of the canonical `{purposes: [{key, name, description, required, category}] by key, notice: {title, description}}`. */
export function consentHashOf(config: VersionConfig): string {
  const categoryName = new Map(config.categories.map((c) => [c.id, c.name]));
  const purposes = [...config.purposes]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((p) => ({ key: p.key, name: p.name, description: p.description, required: p.required, category: categoryName.get(p.categoryId) }));
  return sha256({ purposes, notice: { title: config.notice.title, description: config.notice.description } });
}

/** decisions.md: SHA-256 of the canonical `{number, config}`. */
export const contentHashOf = (number: number, config: VersionConfig) => sha256({ number, config });

/** A draft body for PUT /consent: one required purpose and two optional ones. */
export function sampleDraft(notice: Partial<Notice> = {}) {
  return {
    categories: [
      { ref: 'essential', name: 'Essential', sortOrder: 0 },
      { ref: 'statistics', name: 'Statistics', sortOrder: 1 },
    ],
    purposes: [
      { key: 'necessary', name: 'Necessary', description: 'Keeps the site working', required: true, categoryId: 'essential', sortOrder: 0 },
      { key: 'analytics', name: 'Analytics', description: 'Counts visits', required: false, categoryId: 'statistics', sortOrder: 1 },
      { key: 'marketing', name: 'Marketing', description: 'Personalised ads', required: false, categoryId: 'statistics', sortOrder: 2 },
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
      ...notice,
    },
  };
}

export interface PublishedVersion {
  id: string;
  number: number;
  publishedAt: string;
  contentHash: string;
  consentHash: string;
  /** The published config, read back from the version row. */
  config: VersionConfig;
}

/** Saves the draft and publishes it as `actor` (Admin or above). */
export async function publishVersion(
  server: Pick<TestServer, 'request' | 'services'>,
  actor: Pick<Operator, 'token'>,
  projectId: string,
  draft: ReturnType<typeof sampleDraft> = sampleDraft(),
): Promise<PublishedVersion> {
  const saved = await server.request('PUT', `/api/platform/projects/${projectId}/consent`, { token: actor.token, body: draft });
  expect(saved.status, saved.text).toBe(200);
  const published = await server.request('POST', `/api/platform/projects/${projectId}/consent/publish`, { token: actor.token });
  expect(published.status, published.text).toBe(201);
  const version = published.body.version;
  const [row] = await server.services.db.query<{ config: VersionConfig }>('SELECT config FROM consent_versions WHERE id = $1', [version.id]);
  return { ...version, config: row!.config };
}
