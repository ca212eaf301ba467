import type { Experience } from '../consent/experience.js';

/**
 * Every translated text of an experience as `[locale, field, text]`, in a stable order
 * (locales, then notice, purposes, categories, ui). Categories are named by their
 * published name, as the consent hash names them.
 */
export function translationRows(experience: Experience, categoryName: Map<string, string>): [string, string, string][] {
  const rows: [string, string, string][] = [];
  for (const locale of Object.keys(experience.translations).sort()) {
    const translation = experience.translations[locale]!;
    for (const [field, text] of Object.entries(translation.notice ?? {})) if (text !== undefined) rows.push([locale, `notice.${field}`, text]);
    for (const [key, texts] of Object.entries(translation.purposes ?? {})) {
      for (const [field, text] of Object.entries(texts)) if (text !== undefined) rows.push([locale, `purposes.${key}.${field}`, text]);
    }
    for (const [id, texts] of Object.entries(translation.categories ?? {})) {
      if (texts.name !== undefined) rows.push([locale, `categories.${categoryName.get(id) ?? id}.name`, texts.name]);
    }
    for (const [key, text] of Object.entries(translation.ui ?? {})) if (text !== undefined) rows.push([locale, `ui.${key}`, text]);
  }
  return rows;
}
