/**
 * Rules of the per-application pages (data browser, installations, push), appended to the console's
 * one style sheet (src/http/console/pages.ts), whose hash the Content-Security-Policy allows.
 */
export const appPagesStyle = `
.crumbs{margin:0 0 .5rem;color:#57606a;font-size:.95rem}
textarea{line-height:1.4;min-height:6rem}
label.check{font-weight:400;align-items:center}
pre{margin:0 0 1rem;padding:.75rem;background:#f6f8fa;border-radius:.375rem;overflow:auto;font:.85rem/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.scroll{overflow-x:auto}
.scroll table{min-width:100%}
.scroll td{white-space:nowrap;max-width:22rem;overflow:hidden;text-overflow:ellipsis}
.scroll th{text-transform:none;letter-spacing:0}
.scroll td.wrap{white-space:normal;min-width:14rem}
td input[type=checkbox]{width:1.15rem;height:1.15rem;justify-self:start}
fieldset{border:0;padding:0;margin:0}legend{font-weight:600;padding:0}
.inline div.narrow{flex:0 1 9rem}
.actions{align-items:center;margin:0 0 1rem}
.actions a.button{margin:0}
a.button{display:inline-block;padding:.55rem 1rem;border-radius:.375rem;background:#fff;border:1px solid #8c959f;color:#1f2328;text-decoration:none;font-weight:600}
.pager{display:flex;gap:1rem;justify-content:space-between;margin-top:1rem}
.count{font-variant-numeric:tabular-nums;text-align:right}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:0 1rem}
.stats{display:flex;flex-wrap:wrap;gap:.75rem;margin:0 0 1rem;padding:0;list-style:none}
.stats li{background:#f6f8fa;border-radius:.375rem;padding:.5rem .8rem}
ul.codes{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(9rem,1fr));gap:.5rem}
.stats strong{display:block;font-size:1.25rem;font-variant-numeric:tabular-nums}
@media (max-width:40rem){
 .scroll td{white-space:normal;max-width:none}
 .grid2{grid-template-columns:1fr}
 .count{text-align:left}
}
`;
