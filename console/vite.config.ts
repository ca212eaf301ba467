// The operator console: `npm run build:console` (vite build) writes console/dist, served by the service at
// /console/ (rest/routes/console.ts) with the brotli and gzip copies made here, once, at the highest levels.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = join(root, 'dist');

/** Writes file.br and file.gz next to every text asset: the service serves them by Accept-Encoding. */
function precompressed(): Plugin {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    });
  let out = outDir;
  return {
    name: 'precompressed',
    apply: 'build',
    configResolved(config) {
      out = config.build.outDir;
    },
    closeBundle() {
      for (const path of files(out)) {
        if (!/\.(js|css|html|svg|json|txt)$/.test(path)) continue;
        // The levels of src/http/compression.ts precompress() (not imported: the config is bundled apart).
        const body = readFileSync(path);
        writeFileSync(`${path}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }));
        writeFileSync(`${path}.gz`, gzipSync(body, { level: constants.Z_BEST_COMPRESSION }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/console/',
  plugins: [react(), precompressed()],
  build: {
    outDir,
    emptyOutDir: true,
    // Inline nothing: the CSP allows no data: scripts or styles, every asset is a hashed file of its own.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    target: 'es2022',
    // Two pages: the console, and the frame its consent editor previews the draft in (src/preview.ts).
    rollupOptions: { input: { main: join(root, 'index.html'), preview: join(root, 'preview.html') } },
  },
  // Development (`npx vite console`): the service runs on :3000; /graphql and /api go to it.
  server: { proxy: { '/graphql': 'http://localhost:3000', '/api': 'http://localhost:3000', '/sdk': 'http://localhost:3000' } },
});
