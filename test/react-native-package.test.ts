// The npm package @consent/react-native as an app gets it: built (`tsc -p sdk/react-native/tsconfig.build.json`, what
// `npm run build:sdk` runs), `npm pack`ed with @consent/core, unpacked into a scratch app's node_modules beside the app's
// own react, react-native and AsyncStorage, and the README's code type-checked against React Native's real types.
// Fails when `exports`, `files`, a types path or a public type is wrong, or when the README's snippets stop compiling.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tscBin = join(root, 'node_modules/typescript/bin/tsc');
let dir: string;

function install(packageDir: string, name: string) {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', packageDir, '--pack-destination', dir, '--json', '--silent'], { encoding: 'utf8' }));
  mkdirSync(join(dir, 'node_modules', name), { recursive: true });
  execFileSync('tar', ['xzf', join(dir, packed.filename), '-C', join(dir, 'node_modules', name), '--strip-components=1']);
}

// The README's code, as an app would write it.
const CONSUMER = `import AsyncStorage from '@react-native-async-storage/async-storage';
import { useEffect } from 'react';
import { Button, Text } from 'react-native';
import {
  ConsentBanner, ConsentPreferences, ConsentProvider, firebaseSettings, REACT_NATIVE_VERSION, useConsent, useFirebaseConsent, useIsAllowed,
  type ConsentErrorEvent, type FirebaseConsentSettings, type InAppKeyWriter, type UseConsent,
} from '@consent/react-native';

// React Native Firebase's analytics().setConsent(), as its types declare it (booleans).
declare function setConsent(settings: { analytics_storage?: boolean; ad_storage?: boolean; ad_user_data?: boolean; ad_personalization?: boolean }): Promise<void>;
declare const writer: InAppKeyWriter;
const errors: string[] = [];
declare const mmkv: { getString(k: string): string | undefined; set(k: string, v: string): void; remove(k: string): boolean };

export function App() {
  return (
    <ConsentProvider publicKey="pk_live_x" apiBaseUrl="https://consent.example.com" storage={AsyncStorage}
      source={{ appId: 'com.acme.shop', appVersion: '1.4.0' }} locale="de" bottomInset={34}
      adapters={{ network: { subscribe: (fn: (online: boolean) => void) => { fn(true); return () => {}; } } }}
      onError={(e: ConsentErrorEvent) => errors.push(\`\${e.code} \${e.status}\`)}>
      <Screen />
    </ConsentProvider>
  );
}

export function WithMmkv() {
  const storage = { getItem: (k: string) => mmkv.getString(k) ?? null, setItem: (k: string, v: string) => mmkv.set(k, v), removeItem: (k: string) => { mmkv.remove(k); } };
  return <ConsentProvider headless publicKey="pk_live_x" apiBaseUrl="https://consent.example.com" storage={storage}><ConsentBanner /><ConsentPreferences /></ConsentProvider>;
}

function Screen() {
  const allowed: boolean = useIsAllowed('analytics');
  const consent: UseConsent = useConsent();
  const { showPreferences, core, consentHash, choices, promptReason } = consent;
  const settings: FirebaseConsentSettings | null = useFirebaseConsent();
  useEffect(() => { if (settings) void setConsent(settings); }, [settings]);
  useEffect(() => { if (core) void core.writeInAppKeys(writer); }, [core, consentHash, choices]);
  const fromCore: FirebaseConsentSettings | null = core && firebaseSettings(core.firebaseConsent());
  void consent.save({ analytics: true }).then(() => consent.rejectAll());
  return (
    <>
      <Text>{allowed ? 'on' : 'off'} {promptReason} {String(fromCore?.analytics_storage)} {REACT_NATIVE_VERSION}</Text>
      <Button title="Privacy settings" onPress={showPreferences} />
    </>
  );
}

// @ts-expect-error storage is required: without it nothing would survive a restart
export const missingStorage = <ConsentProvider publicKey="pk_live_x" apiBaseUrl="https://consent.example.com" />;
`;

beforeAll(() => {
  execFileSync(process.execPath, [tscBin, '-p', join(root, 'sdk/react-native/tsconfig.build.json')], { cwd: root, encoding: 'utf8' });
  dir = mkdtempSync(join(tmpdir(), 'react-native-package-'));
  install(join(root, 'sdk/react-native'), '@consent/react-native');
  install(join(root, 'sdk/core'), '@consent/core');
  // The app's own React, React Native (with its types) and AsyncStorage: peers of the package.
  mkdirSync(join(dir, 'node_modules/@types'), { recursive: true });
  mkdirSync(join(dir, 'node_modules/@react-native-async-storage'), { recursive: true });
  for (const name of ['react', '@types/react', 'react-native', '@react-native-async-storage/async-storage']) {
    symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name));
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, dependencies: { '@consent/react-native': '*' } }));
  writeFileSync(join(dir, 'App.tsx'), CONSUMER);
}, 120_000);
afterAll(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('npm package @consent/react-native', () => {
  it('ships its build, types and README, with react and react-native as peers and no native code', () => {
    const installed = join(dir, 'node_modules/@consent/react-native');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    // The version receipts carry as source.sdkVersion is the package's.
    expect(readFileSync(join(installed, 'dist/version.js'), 'utf8')).toContain(`REACT_NATIVE_VERSION = '${pkg.version}'`);
    expect(pkg.peerDependencies).toMatchObject({ react: expect.any(String), 'react-native': expect.any(String) });
    expect(pkg.dependencies).toEqual({ '@consent/core': expect.any(String) });
    const files = readdirSync(installed, { recursive: true, encoding: 'utf8' }).sort();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/banner.js', 'dist/preferences.js']));
    // JavaScript and declarations only: no sources, no demo, nothing for Xcode or Gradle.
    expect(files.filter((f) => !/^(README\.md|package\.json|dist(\/[\w-]+\.(js|d\.ts))?)$/.test(f))).toEqual([]);
  });

  it('imports only react, react-native, @consent/core and its own files, compiled (no JSX, no types left)', () => {
    const dist = join(dir, 'node_modules/@consent/react-native/dist');
    const imported = new Set<string>();
    for (const file of readdirSync(dist).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(join(dist, file), 'utf8');
      for (const [, from] of text.matchAll(/(?:from|import)\s*['"]([^'"]+)['"]/g)) if (!from!.startsWith('./')) imported.add(from!);
      expect(text, file).not.toMatch(/<View|<Text|: string\b|interface /);
    }
    expect([...imported].sort()).toEqual(['@consent/core', 'react', 'react-native', 'react/jsx-runtime']);
  });

  it('type-checks the README\'s code against React Native\'s own types', () => {
    const out = (() => {
      try {
        return execFileSync(
          process.execPath,
          [tscBin, '--noEmit', '--strict', '--jsx', 'react-jsx', '--target', 'ES2020', '--lib', 'ES2020', '--module', 'ESNext', '--moduleResolution', 'bundler', '--skipLibCheck', 'App.tsx'],
          { cwd: dir, encoding: 'utf8' },
        );
      } catch (error) {
        return String((error as { stdout?: string }).stdout);
      }
    })();
    expect(out).toBe('');
  });
});
