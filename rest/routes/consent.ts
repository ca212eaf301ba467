import type { RouteDef } from '../route.js';

export const consentRoutes: RouteDef[] = [];
