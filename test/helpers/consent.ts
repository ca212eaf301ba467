import { expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Operator } from './fixtures.js';
import type { TestServer } from './server.js';

export const consentPath = (projectId: string, rest = '') => `/api/platform/projects/${projectId}/consent${rest}`;
export const evidencePath = (projectId: string, rest = '') => `/api/platform/projects/${projectId}/evidence/publish${rest}`;

/** Config overrides for files that register many operators (a fresh team per test). */
export const NOTICE = {
  title: 'We value your privacy',
  description: 'We use cookies to run the shop and, with your consent, to measure and advertise.',
  acceptLabel: 'Accept all',
  rejectLabel: 'Reject all',
  manageLabel: 'Manage choices',
  companyName: 'Acme GmbH',
  logoUrl: 'https://cdn.example.com/logo.svg',
  primaryColor: '#1f4e79',
};

/** A typical draft through PUT /consent: two categories by ref, three purposes, the notice. */
export async function putDraft(server: TestServer, actor: Operator, projectId: string, overrides: Record<string, unknown> = {}) {
  const response = await server.request('PUT', consentPath(projectId), {
    token: actor.token,
    body: {
      categories: [
        { ref: 'essential', name: 'Essential', sortOrder: 0 },
        { ref: 'marketing', name: 'Marketing', sortOrder: 1 },
      ],
      purposes: [
        { key: 'necessary', name: 'Necessary', description: 'Keeps the shop working', required: true, categoryId: 'essential', sortOrder: 0 },
        { key: 'analytics', name: 'Analytics', description: 'Counts visits', required: false, categoryId: 'marketing', sortOrder: 1 },
        { key: 'ads', name: 'Advertising', description: 'Personalised ads', required: false, categoryId: 'marketing', sortOrder: 2 },
      ],
      notice: NOTICE,
      ...overrides,
    },
  });
  expect(response.status, response.text).toBe(200);
  return response.body as {
    draft: {
      categories: { id: string; name: string; sortOrder: number }[];
      purposes: { id: string; key: string; name: string; description: string; required: boolean; categoryId: string; sortOrder: number }[];
      notice: typeof NOTICE;
    };
    latestVersion: Version | null;
    hasUnpublishedChanges: boolean;
  };
}

export interface Version {
  id: string;
  number: number;
  publishedAt: string;
  contentHash: string;
  consentHash: string;
}

export async function publish(server: TestServer, actor: Operator, projectId: string): Promise<Version> {
  const response = await server.request('POST', consentPath(projectId, '/publish'), { token: actor.token });
  expect(response.status, response.text).toBe(201);
  return response.body.version;
}
