// Lives in the shadow root. Every colour, the radius and the font come from custom properties a page may set
// on `consent-sdk` (its rules beat `:host`), e.g. `consent-sdk { --cs-primary: #0a7d32 }`; the dark values
// have their own names (`--cs-dark-bg`, ...). Parts for `::part()`: banner, dialog, title, button, primary,
// switch, link.
const DARK = '--bg:var(--cs-dark-bg,#1d1e21);--fg:var(--cs-dark-fg,#eceef1);--mu:var(--cs-dark-muted,#b9bdc4);--ln:var(--cs-dark-link,#9cc3ff);--pr:var(--cs-dark-primary,var(--np,#5b8def));--op:var(--cs-dark-on-primary,var(--nop,#000));--er:#ff9c9c';

export const STYLES = `
*{box-sizing:border-box}
.w{--bg:var(--cs-bg,#fff);--fg:var(--cs-fg,#1b1b1b);--mu:var(--cs-muted,#555);--ln:var(--cs-link,#0b50c9);--pr:var(--cs-primary,var(--np,#1f4fd1));--op:var(--cs-on-primary,var(--nop,#fff));--r:var(--cs-radius,8px);font:var(--cs-font,14px/1.5 system-ui,sans-serif);color:var(--fg)}
.dark{${DARK}}
@media(prefers-color-scheme:dark){.auto{${DARK}}}
.banner,.dialog{background:var(--bg);color:var(--fg);border-radius:var(--r);box-shadow:0 4px 24px #00000059;max-height:calc(100vh - 16px);overflow:auto}
.banner{position:fixed;left:8px;right:8px;bottom:8px;max-width:760px;margin:0 auto;padding:16px;animation:in .25s ease-out}
@keyframes in{from{translate:0 24px;opacity:0}}
.backdrop{position:fixed;inset:0;background:#0000008c;display:flex;align-items:center;justify-content:center;padding:8px}
.dialog{width:100%;max-width:560px;padding:20px}
.dialog:focus,.w:focus{outline:0}
.head{display:flex;align-items:center;gap:8px;margin-bottom:8px}
.head div{flex:1}
h2{font-size:18px;margin:0}
p{margin:0 0 12px}
.company,small,em{font-size:12px;color:var(--mu);font-style:normal}
a{color:var(--ln)}
.logo{max-height:32px;max-width:120px}
.gpc{padding:8px;border-inline-start:3px solid var(--pr)}
fieldset{border:0;padding:0;margin:0 0 12px;min-width:0}
legend{font-weight:600;padding:0}
label{display:flex;gap:12px;align-items:flex-start;padding:6px 0;cursor:pointer}
label span{flex:1}
small{display:block}
[role=switch]{appearance:none;flex:none;width:40px;height:24px;margin:0;border-radius:12px;cursor:pointer;border:2px solid var(--mu);background:radial-gradient(circle,var(--mu) 6px,#0000 7px) 0 0/20px 20px no-repeat;transition:background-position .15s}
[role=switch]:checked{background-color:var(--pr);border-color:var(--pr);background-image:radial-gradient(circle,var(--op) 6px,#0000 7px);background-position:16px 0}
[dir=rtl] [role=switch]{background-position-x:16px}[dir=rtl] [role=switch]:checked{background-position-x:0}
[role=switch]:disabled{opacity:.6;cursor:default}
.actions{display:flex;gap:8px;flex-wrap:wrap}
button{flex:1 1 0;min-height:44px;padding:8px 16px;font:inherit;font-weight:600;cursor:pointer;border-radius:calc(var(--r) - 2px);border:2px solid var(--pr);background:var(--bg);color:var(--fg)}
.primary{background:var(--pr);color:var(--op)}
.manage{flex:0 1 auto;border-color:#0000;text-decoration:underline}
@media(max-width:480px){.actions{flex-direction:column}.actions button{flex:none}}
[aria-busy=true] button{opacity:.6;cursor:progress}
.close{flex:none;min-height:0;padding:2px 10px;border-color:#0000;font-size:22px;line-height:1}
:focus-visible{outline:3px solid var(--fg);outline-offset:2px}
.error{color:var(--er,#c4001a);margin:8px 0 0}
.error:empty,.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
@media(prefers-reduced-motion:reduce){*{animation:none!important;transition:none!important}}
`;
