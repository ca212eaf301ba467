// Imports every domain type file, then builds the schema. Add a domain by adding one import.
import { builder } from './builder.js';
import './types/user.js';
import './types/organization.js';
import './types/project.js';
import './types/consent.js';
import './types/evidence.js';
import './types/keys.js';
import './types/sdk.js';
import './types/receipts.js';
import './types/ledger.js';
import './types/stats.js';
import './types/webhooks.js';
import './types/subjects.js';
import './types/notifications.js';
import './types/billing.js';
import './types/members.js';
import './types/audit.js';
import './types/scans.js';
import './types/tcf.js';
import './types/graph.js';

export const schema = builder.toSchema({ sortSchema: true });
