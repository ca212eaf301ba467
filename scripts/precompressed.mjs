// A build plugin (rollup, and vite, which runs rollup's output hooks): writes file.br and file.gz next to every
// text file the build wrote, at the highest levels, which a per-request compressor could not afford. The service
// serves them by Accept-Encoding (src/http/compression.ts readBuilt) and compresses nothing at start-up.
// Used by sdk/rollup.config.mjs and console/vite.config.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const TEXT = /\.(m?js|css|html|svg|json|txt)$/;

/** The levels of src/http/compression.ts precompress(), which makes the SDK config's codings at run time. */
export function compressBoth(body) {
  return {
    br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzip: gzipSync(body, { level: constants.Z_BEST_COMPRESSION }),
  };
}

export function precompressed() {
  return {
    name: 'precompressed',
    writeBundle(output, bundle) {
      const dir = output.dir ?? dirname(output.file);
      for (const name of Object.keys(bundle)) {
        if (!TEXT.test(name)) continue;
        const path = join(dir, name);
        const { br, gzip } = compressBoth(readFileSync(path));
        writeFileSync(`${path}.br`, br);
        writeFileSync(`${path}.gz`, gzip);
      }
    },
  };
}
