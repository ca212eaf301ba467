import { randomBytes } from 'node:crypto';

/** URL-safe slug from a display name: "Café Münster!" -> "cafe-munster". */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
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
