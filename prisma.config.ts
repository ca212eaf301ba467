import { defineConfig } from 'prisma/config';

// prisma generate only: the service applies prisma/migrations itself (see src/db/migrate.ts).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
