// The console's live preview (docs/console.md): the answer GET /api/sdk/v2/config would give if the draft were
// published now, in one locale, so the real SDK v2 can render it in the console without publishing anything.
import { localize, resolveLocale } from '../sdk/config-v2.js';
import { buildConfig, consentHash, contentHash } from './config.js';
import type { Draft } from './draft.js';
import { DEFAULT_EXPERIENCE, type Experience } from './experience.js';
import type { PublishedVersion } from './versions.js';

export const PREVIEW_VERSION_ID = 'draft';

export function draftPreview(
  projectId: string,
  summary: { draft: Draft; experience: Experience | null; latestVersion: PublishedVersion | null },
  locale: string | undefined,
  now: Date,
) {
  const experience = summary.experience ?? DEFAULT_EXPERIENCE;
  const config = buildConfig(summary.draft);
  const number = (summary.latestVersion?.number ?? 0) + 1;
  const version: PublishedVersion = {
    id: PREVIEW_VERSION_ID,
    number,
    publishedAt: now,
    contentHash: contentHash(number, config, summary.experience?.tcf),
    consentHash: consentHash(config, summary.experience?.translations),
    config,
    experience: summary.experience,
  };
  const localized = localize(version, experience, (locale && resolveLocale(experience, locale)) || experience.defaultLocale);
  return {
    projectId,
    version: { id: version.id, number, publishedAt: now.toISOString(), contentHash: version.contentHash, consentHash: version.consentHash },
    locale: localized.locale,
    locales: localized.locales,
    dir: localized.dir,
    config: localized.config,
    ui: localized.ui,
    experience: localized.experience,
  };
}
