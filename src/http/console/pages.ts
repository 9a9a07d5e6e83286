import type { FastifyReply } from 'fastify';
import { escapeHtml, htmlHead, styleOnlyPolicy } from '../mail-pages.ts';
import type { Operator } from '../../console/operators.ts';
import type { AuditEntry } from '../../storage/operator-store.ts';
import type { AppRecord } from '../../objects/types.ts';
import type { AppKeys } from '../../apps/registry.ts';
import { appPagesStyle } from './style-app.ts';
import { chartStyle } from './charts.ts';

/**
 * The console's pages: server-rendered HTML, one inline style sheet allowed by its hash, no script.
 * Every action is a plain form (POST, then a redirect), so each page works with the keyboard, a
 * screen reader and any browser; tables become stacked cards below 40rem.
 */
const style = `
*{box-sizing:border-box}
body{margin:0;background:#f4f5f7;color:#1f2328;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
a{color:#1a56db}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #1f2328;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:2}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem;padding:.75rem 1.25rem;background:#1f2328;color:#fff}
header .brand{font-weight:700;margin-right:auto;color:#fff;text-decoration:none}
header nav a{color:#fff;margin-right:1rem;white-space:nowrap;display:inline-block}
header nav a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
header form{margin:0;display:flex;align-items:center;gap:.75rem}
header .who{color:#d0d7de;font-size:.9rem}
header button{margin:0;width:auto;padding:.35rem .8rem;background:#fff;color:#1f2328}
header button:hover{background:#d0d7de}
main{max-width:64rem;margin:1.5rem auto;padding:0 1rem}
main.narrow{max-width:26rem;margin-top:3rem}
.card{background:#fff;border-radius:.5rem;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.12);margin-bottom:1.5rem}
table+p{margin-top:1rem}.card>:last-child{margin-bottom:0}
h1{margin:0 0 1rem;font-size:1.5rem;line-height:1.25}
h2{margin:0 0 .75rem;font-size:1.15rem}
p{margin:0 0 1rem}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input{width:100%;padding:.6rem .7rem;font:inherit;color:inherit;border:1px solid #8c959f;border-radius:.375rem;background:#fff}
button{margin-top:1.25rem;width:100%;padding:.65rem 1rem;font:inherit;font-weight:600;color:#fff;background:#1a56db;border:0;border-radius:.375rem;cursor:pointer}
button:hover{background:#1646b5}
.inline{display:flex;gap:.75rem;align-items:flex-end;flex-wrap:wrap}
.inline div{flex:1 1 14rem}.inline label{margin-top:0}
.inline button{width:auto;margin-top:0}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.55rem .6rem;border-bottom:1px solid #d0d7de;vertical-align:top}
th{font-size:.85rem;color:#57606a;text-transform:uppercase;letter-spacing:.03em}
code{font:.9rem ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.notice{padding:.75rem 1rem;border-radius:.375rem;border:1px solid;margin-bottom:1rem}
.error{background:#fff1f0;border-color:#cf222e;color:#82071e}
.success{background:#effaf1;border-color:#1a7f37;color:#0f5323}
.muted{color:#57606a}
dl.keys{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
dl.keys dt{font-weight:600}dl.keys dd{margin:0}
h3{margin:1.25rem 0 .5rem;font-size:1rem}
select,textarea{width:100%;padding:.55rem .6rem;font:inherit;color:inherit;border:1px solid #8c959f;border-radius:.375rem;background:#fff}
textarea{font:.9rem ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid #1f2328;outline-offset:2px}
input:disabled,select:disabled,textarea:disabled{background:#f4f5f7;color:#57606a}
.check{display:flex;gap:.6rem;align-items:flex-start;margin:.75rem 0}
.check input{width:1.15rem;height:1.15rem;margin:.2rem 0 0;flex:none}
.check label{margin:0;font-weight:600}
.hint{display:block;font-weight:400;font-size:.9rem;color:#57606a;margin:.25rem 0 0}
nav.tabs{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin:-.25rem 0 1rem;border-bottom:1px solid #d0d7de}
nav.tabs a{padding:.35rem 0;text-decoration:none}
nav.tabs a[aria-current=page]{font-weight:700;border-bottom:3px solid #1a56db;color:#1f2328}
details{border-top:1px solid #d0d7de;padding:.6rem 0}
summary{cursor:pointer;font-weight:600;color:#1a56db}
dl.keys+form{margin-top:1.25rem}
td details{border:0;padding:0}td details .actions{margin-top:.5rem}
button.secondary{background:#fff;color:#1f2328;border:1px solid #8c959f;width:auto;margin:0;padding:.35rem .8rem}
button.secondary:hover{background:#f4f5f7}
button.destructive{background:#cf222e}button.destructive:hover{background:#a40e26}
.card.danger{border:1px solid #cf222e}
.actions{display:flex;flex-wrap:wrap;gap:.75rem}.actions form{margin:0}.actions button{width:auto;margin:0}
code.secret{display:inline-block;padding:.35rem .5rem;background:#fff;border:1px dashed #1a7f37;font-size:1rem}
pre{overflow:auto;background:#f6f8fa;padding:.75rem;border-radius:.375rem;font:.85rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:0}
.qr{width:12rem;height:12rem;display:block;margin:.5rem 0 1rem}
@media (max-width:40rem){
 header{padding:.75rem 1rem}
 main{margin-top:1rem;padding:0 .5rem}
 .card{padding:1rem}
 thead{position:absolute;left:-999px}
 tr{display:block;border-bottom:1px solid #d0d7de;padding:.5rem 0}
 td{display:grid;grid-template-columns:6.5rem 1fr;gap:.5rem;border:0;padding:.2rem 0}
 td::before{content:attr(data-label);font-weight:600;color:#57606a}
 dl.keys{grid-template-columns:1fr}
}
` + appPagesStyle + chartStyle;

const contentSecurityPolicy = styleOnlyPolicy(style);

export interface PageSession {
  operator: Operator;
  csrf: string;
}

export type Section = 'overview' | 'apps' | 'operators' | 'audit' | 'account';

export const h = escapeHtml;

export function csrfField(session: PageSession): string {
  return `<input type="hidden" name="_csrf" value="${h(session.csrf)}">`;
}

export function banner(session: PageSession, section: Section): string {
  const link = (to: Section, text: string) =>
    `<a href="/console/${to}"${to === section ? ' aria-current="page"' : ''}>${text}</a>`;
  return `<header>
<a class="brand" href="/console/apps">Roost console</a>
<nav aria-label="Console">${link('overview', 'Overview')}${link('apps', 'Apps')}${link('operators', 'Operators')}${link('audit', 'Audit log')}${link('account', 'Account')}</nav>
<form method="post" action="/console/sign-out">${csrfField(session)}
<span class="who">${h(session.operator.name)} (${session.operator.role})</span>
<button type="submit">Sign out</button></form>
</header>`;
}

export function document(title: string, header: string, main: string, mainClass = ''): string {
  return `${htmlHead(`${title} – Roost console`, style)}
<body>
<a class="skip" href="#main">Skip to content</a>
${header}
<main id="main"${mainClass ? ` class="${mainClass}"` : ''}>
${main}
</main>
</body>
</html>
`;
}

/** Headers of every console answer: never cached, framed, sniffed, or sent on as a Referer. */
export function consoleHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'same-origin')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY');
}

export function send(reply: FastifyReply, status: number, html: string): FastifyReply {
  return consoleHeaders(reply).status(status).header('Content-Security-Policy', contentSecurityPolicy).type('text/html; charset=utf-8').send(html);
}

export function signInPage(reply: FastifyReply, status: number, options: { name?: string; error?: string } = {}): FastifyReply {
  // After a refusal the name is kept, so the password field takes the focus.
  const again = Boolean(options.name);
  const error = options.error ? `<p class="notice error" role="alert">${h(options.error)}</p>` : '';
  const main = `<div class="card">
<h1>Sign in</h1>
${error}<form method="post" action="/console/sign-in">
<label for="name">Operator name</label>
<input id="name" name="name" autocomplete="username" required${again ? '' : ' autofocus'} value="${h(options.name ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${again ? ' autofocus' : ''}>
<label for="code">Authenticator code <span class="hint">Only if you set up TOTP: the app's 6 digits, or one of your recovery codes</span></label>
<input id="code" name="code" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="20">
<button type="submit">Sign in</button>
</form>
</div>
<p class="muted">No operator yet? Run <code>roost operator create NAME</code> on the server.</p>`;
  return send(reply, status, document('Sign in', '', main, 'narrow'));
}

export function date(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

export function appsPage(reply: FastifyReply, session: PageSession, apps: AppRecord[], created?: AppKeys & { name: string }): FastifyReply {
  const rows = apps
    .map((app) => `<tr><td data-label="Name"><a href="/console/apps/${h(app.appId)}">${h(app.name)}</a></td><td data-label="App ID"><code>${h(app.appId)}</code></td>` +
      `<td data-label="Created">${date(app.createdAt)}</td></tr>`)
    .join('\n');
  const shown = created
    ? `<div class="card notice success" role="status"><h2>Application ${h(created.name)} created</h2>
<p>Copy the master key now: the console does not show it again.</p>
<dl class="keys"><dt>App ID</dt><dd><code>${h(created.appId)}</code></dd><dt>App key</dt><dd><code>${h(created.appKey)}</code></dd>
<dt>Master key</dt><dd><code>${h(created.masterKey)}</code></dd></dl></div>`
    : '';
  const create = session.operator.role === 'admin'
    ? `<div class="card"><h2>New application</h2>
<form method="post" action="/console/apps" class="inline">${csrfField(session)}
<div><label for="app-name">Name</label><input id="app-name" name="name" required maxlength="100"></div>
<button type="submit">Create</button></form></div>`
    : '';
  const table = apps.length
    ? `<table><thead><tr><th scope="col">Name</th><th scope="col">App ID</th><th scope="col">Created</th></tr></thead>
<tbody>
${rows}
</tbody></table>`
    : '<p>No application yet.</p>';
  const main = `${shown}<div class="card"><h1>Applications</h1>
${table}</div>
${create}`;
  return send(reply, created ? 201 : 200, document('Applications', banner(session, 'apps'), main));
}

export function auditPage(reply: FastifyReply, session: PageSession, entries: AuditEntry[]): FastifyReply {
  const rows = entries
    .map((entry) => `<tr><td data-label="When">${date(entry.at)}</td><td data-label="Who">${h(entry.actor)}</td>` +
      `<td data-label="What"><code>${h(entry.action)}</code></td><td data-label="Target">${h(entry.target)}</td></tr>`)
    .join('\n');
  const main = `<div class="card"><h1>Audit log</h1>
<p class="muted">The latest ${entries.length} changes, newest first.</p>
<table><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>`;
  return send(reply, 200, document('Audit log', banner(session, 'audit'), main));
}

export function messagePage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return send(reply, status, document(title, '', `<div class="card"><h1>${h(title)}</h1><p role="alert">${h(message)}</p>
<p><a href="/console/apps">Back to the console</a></p></div>`, 'narrow'));
}
