import type { RouteDef } from '../route.js';

export const receiptsRoutes: RouteDef[] = [];
