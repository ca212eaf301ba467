import { startTestServer } from '/work/wt/foundation/test/helpers/server.ts';
const s = await startTestServer();
console.log(JSON.stringify((await s.request('POST','/api/platform/auth/register',{body:{email:'a@b.co',password:123456789012345,name:'x'}})).body));
console.log(JSON.stringify((await s.request('POST','/api/platform/auth/register',{body:{email:'a@b.co',password:'123456789012345',name:{a:1}}})).body));
await s.close();
