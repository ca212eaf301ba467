// The IAB TCF CMP API stub (CMP API v2, "How does the CMP stub API work?"): `window.__tcfapi` queues every call
// but `ping` (answered at once, `cmpStatus: "stub"`), the hidden `__tcfapiLocator` frame tells ad tags in
// iframes that a CMP is above them, and a `message` listener answers their `__tcfapiCall` posts through
// whatever `__tcfapi` is by then (the stub, later the IAB library's, src/v2/tcf.ts): locator.ts, shared with gpp.js. Installed at evaluation
// by stub.js when its script tag says `data-tcf`, and by tcf.js itself when the page had no stub.
import { locatorProxy } from './locator';
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
    if (args[0] == 'ping') args[2]?.({ cmpLoaded: false, cmpStatus: 'stub', apiVersion: '2' }, true);
    else queue.push(args);
  };
  locatorProxy('__tcfapi');
}
