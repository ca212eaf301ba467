import type { RouteDef } from '../route.js';

export const evidenceRoutes: RouteDef[] = [];
