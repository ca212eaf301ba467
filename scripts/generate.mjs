// `prisma generate` without network: Prisma looks for its schema-engine binary
// even though generating needs none, and the binary cannot be downloaded here.
// Pointing it at any existing file lets generation run (see DEVELOPERS notes in README).
import { execFileSync } from 'node:child_process';
import { delimiter, resolve } from 'node:path';

const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
// The Pothos generator is a bin of node_modules; npm scripts put it on PATH, plain `node` does not.
env.PATH = [resolve('node_modules/.bin'), env.PATH].join(delimiter);
execFileSync(process.execPath, ['node_modules/prisma/build/index.js', 'generate'], { stdio: 'inherit', env });
