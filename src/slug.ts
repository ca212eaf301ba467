import { randomBytes } from 'node:crypto';

// Latin letters that Unicode decomposition leaves alone ("ß" has no base letter plus accent).
const LATIN_LETTERS: Record<string, string> = {
  ß: 'ss', ẞ: 'ss', æ: 'ae', Æ: 'ae', œ: 'oe', Œ: 'oe', ø: 'o', Ø: 'o', đ: 'd', Đ: 'd', ð: 'd', Ð: 'd',
  ł: 'l', Ł: 'l', þ: 'th', Þ: 'th', ı: 'i', ŋ: 'n', Ŋ: 'n', ħ: 'h', Ħ: 'h', ĸ: 'k', ſ: 's',
};

/** The shape of our ids (UUIDs, lowercase): a slug never has it, so `--org` cannot mistake one for the other. */
export const ID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * URL-safe slug from a display name: "Café Münster!" -> "cafe-munster", "Straße" -> "strasse".
 * A name that would give an id-shaped slug gets the fallback in front ("org-0193…").
 */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x00-\x7f]/g, (char) => LATIN_LETTERS[char] ?? char)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
  if (ID_SHAPE.test(slug)) return `${fallback}-${slug}`;
  return slug || fallback;
}

/** The slug with a random suffix, for retries after a collision. */
export const withRandomSuffix = (slug: string) => `${slug}-${randomBytes(3).toString('hex')}`;

/**
 * Inserts with the plain slug first and, on a unique-slug collision, retries
 * with random suffixes (the database's unique index is the arbiter, so races are safe).
 */
export async function insertWithUniqueSlug<T>(
  base: string,
  insert: (slug: string) => Promise<T>,
  isCollision: (error: unknown) => boolean,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await insert(attempt === 0 ? base : withRandomSuffix(base));
    } catch (error) {
      if (!isCollision(error) || attempt >= 5) throw error;
    }
  }
}
