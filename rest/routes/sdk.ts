import type { RouteDef } from '../route.js';

export const sdkRoutes: RouteDef[] = [];
