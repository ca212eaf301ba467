import type { RouteDef } from '../route.js';

export const notificationsRoutes: RouteDef[] = [];
