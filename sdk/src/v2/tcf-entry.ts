// The entry of dist/v2/tcf.js: its global `ConsentTcf` is the function the core calls (tcf.ts).
export { default } from './tcf';
