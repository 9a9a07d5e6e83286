/**
 * Rules of the per-application pages (data browser, installations, push), appended to the console's
 * one style sheet (src/http/console/pages.ts), whose hash the Content-Security-Policy allows.
 */
export const appPagesStyle = `
.crumbs{margin:0 0 .5rem;color:#57606a;font-size:.95rem}
nav.tabs{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0 0 1.25rem;border-bottom:1px solid #d0d7de}
nav.tabs a{padding:.4rem .1rem;text-decoration:none;color:#1f2328}
nav.tabs a[aria-current=page]{font-weight:700;border-bottom:3px solid #1a56db}
select,textarea{width:100%;padding:.55rem .6rem;font:inherit;color:inherit;border:1px solid #8c959f;border-radius:.375rem;background:#fff}
textarea{font:.9rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;min-height:6rem}
select:focus-visible,textarea:focus-visible{outline:3px solid #1f2328;outline-offset:2px}
pre{margin:0 0 1rem;padding:.75rem;background:#f6f8fa;border-radius:.375rem;overflow:auto;font:.85rem/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.scroll{overflow-x:auto}
.scroll table{min-width:100%}
.scroll td{white-space:nowrap;max-width:22rem;overflow:hidden;text-overflow:ellipsis}
.inline div.narrow{flex:0 1 9rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;margin:0 0 1rem}
.actions form{margin:0}
.actions button,.actions a.button{width:auto;margin:0}
a.button{display:inline-block;padding:.55rem 1rem;border-radius:.375rem;background:#fff;border:1px solid #8c959f;color:#1f2328;text-decoration:none;font-weight:600}
button.secondary{background:#fff;color:#1f2328;border:1px solid #8c959f}
button.secondary:hover{background:#f4f5f7}
button.danger{background:#cf222e}button.danger:hover{background:#a40e26}
.pager{display:flex;gap:1rem;justify-content:space-between;margin-top:1rem}
.count{font-variant-numeric:tabular-nums;text-align:right}
.check{display:flex;gap:.5rem;align-items:center;font-weight:400;margin-top:1rem}
.check input{width:auto}
details{margin:0 0 1rem}summary{cursor:pointer;font-weight:600}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:0 1rem}
.stats{display:flex;flex-wrap:wrap;gap:.75rem;margin:0 0 1rem;padding:0;list-style:none}
.stats li{background:#f6f8fa;border-radius:.375rem;padding:.5rem .8rem}
.stats strong{display:block;font-size:1.25rem;font-variant-numeric:tabular-nums}
@media (max-width:40rem){
 .scroll td{white-space:normal;max-width:none}
 .grid2{grid-template-columns:1fr}
 .count{text-align:left}
}
`;
