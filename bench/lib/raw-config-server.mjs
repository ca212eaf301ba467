// The baseline of bench/sdk-config-wrk.ts, in its own process: a raw node:http server replaying the bytes and
// headers the service answered (captured by the driver), the brotli ones when the request names `br`, and a 304
// when If-None-Match is the captured ETag. Plain JavaScript, so no loader runs in the measured process.
//   node bench/lib/raw-config-server.mjs <answers.json>   prints the port it listens on, then serves
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const answers = new Map(
  Object.entries(JSON.parse(readFileSync(process.argv[2], 'utf8'))).map(([path, { plain, encoded }]) => {
    const load = (captured) => ({ ...captured, body: Buffer.from(captured.body, 'base64') });
    return [path, { plain: load(plain), encoded: load(encoded) }];
  }),
);

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const both = answers.get(req.url);
  if (!both) return res.writeHead(404).end();
  const { body, headers, etag } = req.headers['accept-encoding']?.includes('br') ? both.encoded : both.plain;
  if (req.headers['if-none-match'] === etag) {
    const { 'content-length': _l, 'content-type': _t, 'content-encoding': _e, ...notModified } = headers;
    res.writeHead(304, notModified).end();
    return;
  }
  res.writeHead(200, headers).end(body);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
