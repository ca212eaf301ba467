import type { Method, RouteDef } from './route.js';

interface Pattern {
  path: string;
  regex: RegExp;
  keys: string[];
  methods: Map<Method, RouteDef>;
}

export type Match =
  | { kind: 'route'; route: RouteDef; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

/** Static paths are one map lookup (the SDK's hot paths); parameterised ones a short regex scan. */
export class Router {
  private readonly exact = new Map<string, Map<Method, RouteDef>>();
  private readonly patterns: Pattern[] = [];

  constructor(routes: RouteDef[]) {
    for (const route of routes) this.add(route);
  }

  add(route: RouteDef): void {
    if (!route.path.includes(':')) {
      const methods = this.exact.get(route.path) ?? new Map<Method, RouteDef>();
      methods.set(route.method, route);
      this.exact.set(route.path, methods);
      return;
    }
    const keys: string[] = [];
    // `:name` is one path segment; a final `:name*` is the rest of the path, slashes included (the console's
    // deep links). Patterns are tried in the order they were added, so a wildcard goes after its siblings.
    const source = route.path.replace(/:(\w+)(\*?)/g, (_, key: string, rest: string) => {
      keys.push(key);
      return rest ? '(.+)' : '([^/]+)';
    });
    let pattern = this.patterns.find((p) => p.path === source);
    if (!pattern) {
      pattern = { path: source, regex: new RegExp(`^${source}$`), keys, methods: new Map() };
      this.patterns.push(pattern);
    }
    pattern.methods.set(route.method, route);
  }

  match(method: string, path: string): Match {
    const normalized = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const exact = this.exact.get(normalized);
    if (exact) return pick(exact, method, {});
    for (const pattern of this.patterns) {
      const found = pattern.regex.exec(normalized);
      if (!found) continue;
      const params: Record<string, string> = {};
      pattern.keys.forEach((key, i) => {
        params[key] = safeDecode(found[i + 1]!);
      });
      return pick(pattern.methods, method, params);
    }
    return { kind: 'not_found' };
  }

  get routes(): RouteDef[] {
    return [...[...this.exact.values()].flatMap((m) => [...m.values()]), ...this.patterns.flatMap((p) => [...p.methods.values()])];
  }
}

function pick(methods: Map<Method, RouteDef>, method: string, params: Record<string, string>): Match {
  const route = methods.get((method === 'HEAD' ? 'GET' : method) as Method);
  if (route) return { kind: 'route', route, params };
  const allow: string[] = [...methods.keys()];
  if (allow.includes('GET')) allow.push('HEAD');
  return { kind: 'method_not_allowed', allow };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
