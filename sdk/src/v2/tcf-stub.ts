// The IAB TCF CMP API stub (CMP API v2, "How does the CMP stub API work?"): `window.__tcfapi` queues every call
// but `ping` (answered at once, `cmpStatus: "stub"`), the hidden `__tcfapiLocator` frame tells ad tags in
// iframes that a CMP is above them, and a `message` listener answers their `__tcfapiCall` posts through
// whatever `__tcfapi` is by then (the stub, later the IAB library's, src/v2/tcf.ts). Installed at evaluation
// by stub.js when its script tag says `data-tcf`, and by tcf.js itself when the page had no stub.
import { w } from './page';
type Callback = (returnValue: unknown, success: boolean) => void;
type Call = [command?: string, version?: unknown, callback?: Callback, parameter?: unknown];

export function tcfStub(): void {
  // A CMP (ours or another's stub) is there already, with its own queue, frame and listener.
  if (w.__tcfapi) return;
  const queue: Call[] = [];
  // Called without arguments it hands its queue over: the IAB library's way of taking a stub over.
  w.__tcfapi = (...args: Call) => {
    if (!args.length) return queue;
    // gdprApplies is unknown until the configuration says where the visitor is. The fields the IAB's own stub
    // answers (@iabtechlabtcf/stub): a banner's displayStatus is tcf.js's to say.
    if (args[0] == 'ping') args[2]?.({ cmpLoaded: false, cmpStatus: 'stub', apiVersion: '2.2' }, true);
    else queue.push(args);
  };
  const frame = document.createElement('iframe');
  frame.name = '__tcfapiLocator';
  frame.style.display = 'none';
  // In <head> while the page is being parsed: a named frame anywhere in the document is found by `frames[name]`.
  document.head.append(frame);
  addEventListener('message', (event) => {
    let data = event.data,
      asString = typeof data == 'string',
      call;
    try {
      call = (asString ? JSON.parse(data) : data).__tcfapiCall;
    } catch {
      // not JSON, or null: not a call
    }
    if (typeof call?.command == 'string')
      w.__tcfapi(
        call.command,
        call.version,
        (returnValue: unknown, success: boolean) => {
          const answer = { __tcfapiReturn: { returnValue, success, callId: call.callId } };
          (event.source as Window | null)?.postMessage(asString ? JSON.stringify(answer) : answer, '*');
        },
        call.parameter,
      );
  });
}
