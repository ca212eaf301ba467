// The React Native package's demo app (sdk/react-native/demo) in a browser: bundled by esbuild with
// `react-native` mapped to react-native-web and @consent/core read from its sources (so the bundle is made from
// what is checked out, never a stale build), and served on loopback as an app's "screen": one page at phone size.
// No device or emulator exists here; this is what the package's components look like and do through
// react-native-web (test/e2e/react-native.test.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The demo app as one browser script (an IIFE), React in development mode so that its warnings reach the console. */
export async function bundleDemo(): Promise<string> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['sdk/react-native/demo/index.web.tsx'],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    jsx: 'automatic',
    // What Metro does for a web build: platform files first, and react-native is react-native-web.
    resolveExtensions: ['.web.tsx', '.web.ts', '.web.js', '.tsx', '.ts', '.js', '.json'],
    alias: { 'react-native': 'react-native-web', '@consent/core': './sdk/core/src/index.ts' },
    define: { 'process.env.NODE_ENV': '"development"', __DEV__: 'true' },
    logLevel: 'warning',
  });
  return result.outputFiles[0]!.text;
}

export interface DemoServer {
  origin: string;
  /** The app's page with these start options (key, service, locale, headless). */
  page(options: { publicKey: string; apiBaseUrl: string; locale?: string; headless?: boolean; refuseDecisionWrites?: boolean }): string;
  close(): Promise<void>;
}

/** Serves the bundle and a page that starts it with the options in its query string. */
export async function startDemoServer(bundle: string): Promise<DemoServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://demo');
    if (url.pathname === '/app.js') return void res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(bundle);
    // No icon: a browser asks for one, an app has none.
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    if (url.pathname !== '/') return void res.writeHead(404).end();
    const options = JSON.parse(url.searchParams.get('options') ?? '{}');
    const json = JSON.stringify(options).replaceAll('<', '\\u003c');
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    // The root fills the viewport as an app's root view fills the screen.
    res.end(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme shop (React Native demo)</title>
<style>html,body,#root{height:100%;margin:0}#root{display:flex}</style>
</head>
<body>
<main id="root"></main>
<script>window.demoOptions = ${json};</script>
<script src="/app.js"></script>
</body>
</html>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page: (options) => `${origin}/?options=${encodeURIComponent(JSON.stringify(options))}`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
