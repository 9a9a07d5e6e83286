import type { FastifyReply } from 'fastify';
import type { UserView } from '../../accounts/user-admin.ts';
import type { AppRecord, JsonObject, StoredObject } from '../../objects/types.ts';
import { toWire } from '../../objects/wire.ts';
import { appNav } from './app-nav.ts';
import { banner, csrfField, date, document, h, send, type PageSession } from './pages.ts';

function text(value: unknown): string {
  return typeof value === 'string' ? h(value) : '<span class="muted">–</span>';
}

function notices(options: { notice?: string; error?: string }): string {
  return (options.error ? `<p class="notice error" role="alert">${h(options.error)}</p>` : '') +
    (options.notice ? `<p class="notice success" role="status">${h(options.notice)}</p>` : '');
}

export function usersPage(reply: FastifyReply, session: PageSession, app: AppRecord, query: string, results: StoredObject[] | null, options: { notice?: string } = {}): FastifyReply {
  const base = `/console/apps/${h(app.appId)}/users`;
  const rows = (results ?? [])
    .map((user) => `<tr><td data-label="Username"><a href="${base}/${h(user.objectId)}">${text(user.data.username)}</a></td>` +
      `<td data-label="Email">${text(user.data.email)}</td><td data-label="Phone">${text(user.data.mobilePhoneNumber)}</td>` +
      `<td data-label="objectId"><code>${h(user.objectId)}</code></td><td data-label="Created">${date(user.createdAt)}</td></tr>`)
    .join('\n');
  const found = results === null
    ? ''
    : results.length === 0
      ? `<p role="status">No user has the username, email, phone number or objectId <strong>${h(query)}</strong>.</p>`
      : `<table><thead><tr><th scope="col">Username</th><th scope="col">Email</th><th scope="col">Phone</th><th scope="col">objectId</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  const main = `<div class="card"><h1>${h(app.name)}: users</h1>
${appNav(app.appId, 'users')}
${notices(options)}
<form method="get" action="${base}" class="inline" role="search">
<div><label for="q">Username, email, phone number or objectId</label><input id="q" name="q" value="${h(query)}" required maxlength="256" autocomplete="off" spellcheck="false"${results === null ? ' autofocus' : ''}></div>
<button type="submit">Find</button></form>
<p class="hint">Exact match, as the user typed it at sign-up (phone numbers with their country code, e.g. +8613800138000).</p></div>
${results === null ? '' : `<div class="card"><h2>Found</h2>${found}</div>`}`;
  return send(reply, 200, document(`Users of ${app.name}`, banner(session, 'apps'), main));
}

/** One action button; a viewer sees none. */
function action(session: PageSession, path: string, label: string, destructive = false): string {
  return `<form method="post" action="${path}">${csrfField(session)}<button type="submit"${destructive ? ' class="destructive"' : ' class="secondary"'}>${label}</button></form>`;
}

export function userPage(reply: FastifyReply, session: PageSession, app: AppRecord, view: UserView, now: number, options: { notice?: string; error?: string; status?: number } = {}): FastifyReply {
  const { user, lockedUntil } = view;
  const path = `/console/apps/${h(app.appId)}/users/${h(user.objectId)}`;
  const data = user.data;
  const name = typeof data.username === 'string' ? data.username : user.objectId;
  const admin = session.operator.role === 'admin';
  const flag = (value: unknown) => (value === true ? 'yes' : 'no');
  const locked = lockedUntil > now;
  const facts = `<dl class="keys">
<dt>objectId</dt><dd><code>${h(user.objectId)}</code></dd>
<dt>Username</dt><dd>${text(data.username)}</dd>
<dt>Email</dt><dd>${text(data.email)} ${typeof data.email === 'string' ? `(verified: ${flag(data.emailVerified)})` : ''}</dd>
<dt>Phone</dt><dd>${text(data.mobilePhoneNumber)} ${typeof data.mobilePhoneNumber === 'string' ? `(verified: ${flag(data.mobilePhoneVerified)})` : ''}</dd>
<dt>Sign-in</dt><dd>${locked ? `<strong>Locked</strong> until ${date(lockedUntil)} after repeated failures` : 'Not locked'}</dd>
<dt>Created</dt><dd>${date(user.createdAt)}</dd><dt>Updated</dt><dd>${date(user.updatedAt)}</dd></dl>`;
  const actions = admin
    ? `<div class="card"><h2>Actions</h2><div class="actions">
${typeof data.email === 'string' && data.emailVerified !== true ? action(session, `${path}/verify-email`, 'Mark email verified') : ''}
${typeof data.mobilePhoneNumber === 'string' && data.mobilePhoneVerified !== true ? action(session, `${path}/verify-phone`, 'Mark phone verified') : ''}
${typeof data.email === 'string' ? action(session, `${path}/reset`, 'Send password reset email') : ''}
${action(session, `${path}/revoke`, 'Sign out everywhere')}
${locked ? action(session, `${path}/unlock`, 'Unlock sign-in') : ''}
</div>
<p class="hint">“Sign out everywhere” replaces the session token: every device signed in as this user must sign in again.</p></div>
<div class="card danger"><h2>Delete this user</h2>
<p>Deletes the user <strong>${h(name)}</strong> and its session. Objects the user owns stay.</p>
<form method="post" action="${path}/delete">${csrfField(session)}
<div class="check"><input type="checkbox" id="sure" name="sure" required><label for="sure">I want to delete ${h(name)}</label></div>
<button type="submit" class="destructive">Delete user</button></form></div>`
    : '';
  const fields = toWire(user) as JsonObject;
  const main = `<div class="card"><h1>${h(name)}</h1>
${appNav(app.appId, 'users')}
<p><a href="/console/apps/${h(app.appId)}/users">← Find another user</a></p>
${notices(options)}
${facts}</div>
${actions}
<div class="card"><h2>All fields</h2><p class="hint">Passwords and session tokens are never shown; of third-party accounts only their ids.</p>
<pre>${h(JSON.stringify(fields, null, 2))}</pre></div>`;
  return send(reply, options.status ?? 200, document(name, banner(session, 'apps'), main));
}
