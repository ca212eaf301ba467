// Lives in the shadow root: the host page's CSS cannot reach in and ours cannot leak out (ui.ts resets what
// the host element would inherit). --cs-primary and --cs-on-primary are set on the host element from the
// notice's primaryColor.
export const STYLES = `
*{box-sizing:border-box}
.banner,.dialog{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#fff;border-radius:8px;box-shadow:0 4px 24px rgba(0,0,0,.3);max-height:calc(100vh - 16px);overflow:auto}
.banner{position:fixed;left:8px;right:8px;bottom:8px;max-width:760px;margin:0 auto;padding:16px}
.backdrop{position:fixed;inset:0;background:rgba(0,0,0,.5);display:flex;align-items:center;justify-content:center;padding:8px}
.dialog{width:100%;max-width:560px;padding:20px}
.dialog:focus{outline:none}
.head{display:flex;align-items:center;gap:8px;margin-bottom:8px}
.head div{flex:1}
h2{font-size:18px;margin:0}
p{margin:0 0 12px}
.company,small,em{font-size:12px;color:#555;font-style:normal}
.logo{max-height:32px;max-width:120px}
.gpc{padding:8px;background:#f1f4f8;border-left:3px solid var(--cs-primary,#1f4fd1)}
fieldset{border:0;padding:0;margin:0 0 12px;min-width:0}
legend{font-weight:600;padding:0}
label{display:flex;gap:10px;align-items:flex-start;padding:6px 0}
input{width:18px;height:18px;margin:2px 0 0;flex:none;accent-color:var(--cs-primary,#1f4fd1)}
small{display:block}
.actions{display:flex;gap:8px}
@media (max-width:480px){.actions{flex-direction:column}.actions button{flex:none}}
button{flex:1 1 0;min-height:44px;padding:8px 16px;font:inherit;font-weight:600;cursor:pointer;border-radius:6px;border:2px solid var(--cs-primary,#1f4fd1);background:#fff;color:#1b1b1b}
.primary{background:var(--cs-primary,#1f4fd1);color:var(--cs-on-primary,#fff)}
[aria-busy=true] button{opacity:.6;cursor:progress}
.close{flex:none;min-height:0;padding:2px 10px;border-color:transparent;font-size:22px;line-height:1}
:focus-visible{outline:3px solid #1b1b1b;outline-offset:2px}
.error{color:#b00020;margin:8px 0 0}
.error:empty{display:none}
`;
