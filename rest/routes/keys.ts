import type { RouteDef } from '../route.js';

export const keysRoutes: RouteDef[] = [];
