// The operator console: `npm run build:console` (vite build) writes console/dist, served by the service at
// /console/ (rest/routes/console.ts) with the brotli and gzip copies made here, once, at the highest levels (scripts/precompressed.mjs).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { precompressed } from '../scripts/precompressed.mjs';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = join(root, 'dist');

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
