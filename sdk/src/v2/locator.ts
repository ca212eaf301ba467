// The IAB's cross-frame proxy, one for both CMP APIs (TCF: CMP API v2, "Using postmessage"; GPP: CMP API v1.1,
// "How do third-party iframes request the GPP Data?"): a hidden frame named `<api>Locator` tells scripts in
// iframes that a CMP is above them; they post `{ <api>Call: { command, version, parameter, callId } }` and get
// `{ <api>Return: { returnValue, success, callId } }` back, as a JSON string when the call came as one (as the
// IAB's reference stubs answer). The call goes to whatever `window[api]` is by then (a stub, later the CMP).
// stub.js (1 KiB min+gzip) has it for TCF only: with `api` a literal at its one call there, the minifier drops
// GPP's branch. Written for size (no `?.` on the source, as the IAB's stub; a call is anything with a command).
import { w } from './page';

export function locatorProxy(api: '__tcfapi' | '__gpp'): void {
  // A named frame anywhere in the document is found by `frames[name]`: in <head>, as the page may still be parsed.
  // None is looked for first: the TCF stub runs only where no CMP is, gpp.js once per page.
  const frame = document.createElement('iframe');
  frame.name = api + 'Locator';
  frame.style.display = 'none';
  document.head.append(frame);
  addEventListener('message', (event) => {
    let data = event.data,
      asString = typeof data == 'string',
      call: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- whatever the frame posted
    try {
      call = (asString ? JSON.parse(data) : data)[api + 'Call'];
    } catch {
      // not JSON, or null: not a call
    }
    const reply = (returnValue: unknown, success: boolean) => {
      const answer = { [api + 'Return']: { returnValue, success, callId: call.callId } };
      (event.source as Window).postMessage(asString ? JSON.stringify(answer) : answer, '*');
    };
    // Each API's own argument order.
    if (call?.command)
      if (api == '__gpp') w.__gpp(call.command, reply, call.parameter, call.version);
      else w.__tcfapi(call.command, call.version, reply, call.parameter);
  });
}
