import { join, resolve } from 'node:path';

/** Where local tools (the admin CLI, `psql -h DATA_DIR`) reach the running server's embedded database. */
export const socketPathFor = (dataDir: string) => join(resolve(dataDir), '.s.PGSQL.5432');
