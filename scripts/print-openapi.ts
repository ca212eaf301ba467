// `npm run openapi:print`: writes the OpenAPI document as the server serves it (PUBLIC_BASE_URL unset) to
// rest/openapi.json, and the typed client's types generated from it by openapi-typescript to
// test/openapi-client/schema.d.ts. Both are committed; test/openapi-document.test.ts fails when they drift.
import { writeFileSync } from 'node:fs';
import { printedOpenApi, printedClientTypes } from '../test/openapi-client/generate.js';

const document = printedOpenApi();
writeFileSync(new URL('../rest/openapi.json', import.meta.url), document);
writeFileSync(new URL('../test/openapi-client/schema.d.ts', import.meta.url), await printedClientTypes(document));
console.log('rest/openapi.json and test/openapi-client/schema.d.ts written');
