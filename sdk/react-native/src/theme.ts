// Colours and shape of the default UI, from the published experience: the notice's primary colour, the theme's
// colour scheme (light, dark, or the device's with auto) and corner radius. Nothing here depends on React Native.
import type { ConsentConfig } from '@consent/core';

export interface Palette {
  scheme: 'light' | 'dark';
  surface: string;
  text: string;
  muted: string;
  border: string;
  backdrop: string;
  primary: string;
  onPrimary: string;
  radius: number;
}

const HEX = /^#[0-9a-f]{6}$/i;
const FALLBACK_PRIMARY = '#1f4e79';

// Black or white text on the operator's colour, whichever contrasts more (WCAG relative luminance); the browser
// SDK's banner chooses the same way (sdk/src/v2/ui.ts, which cannot be imported here: it needs a DOM).
export function textOn(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 ? '#000000' : '#ffffff';
}

/** The palette for a config; `device` is React Native's useColorScheme(), used when the theme says auto. */
export function palette(config: ConsentConfig | null, device: string | null | undefined): Palette {
  // Checked again here: a config stored by an older version of the app may lack the theme or hold odd values.
  const theme: { colorScheme?: unknown; borderRadius?: unknown } = config?.experience.theme ?? {};
  const wanted = theme.colorScheme === 'dark' || theme.colorScheme === 'auto' ? theme.colorScheme : 'light';
  const scheme = wanted === 'auto' ? (device === 'dark' ? 'dark' : 'light') : wanted;
  const given = config?.config.notice.primaryColor ?? '';
  const primary = HEX.test(given) ? given : FALLBACK_PRIMARY;
  const radius = typeof theme.borderRadius === 'number' && theme.borderRadius >= 0 && theme.borderRadius <= 24 ? theme.borderRadius : 12;
  const colours =
    scheme === 'dark'
      ? { surface: '#1c1c1e', text: '#f2f2f7', muted: '#c7c7cc', border: '#48484a', backdrop: 'rgba(0,0,0,0.6)' }
      : { surface: '#ffffff', text: '#1c1c1e', muted: '#48484a', border: '#c7c7cc', backdrop: 'rgba(0,0,0,0.4)' };
  return { scheme, ...colours, primary, onPrimary: textOn(primary), radius };
}
