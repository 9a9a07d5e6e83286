import type { FastifyReply } from 'fastify';
import type { AppRecord } from '../../objects/types.ts';
import { appBase, appPage, classBase, notice } from './data-pages.ts';
import { cellText } from './data-query.ts';
import { csrfField, h, type PageSession } from './pages.ts';

/** The pages of installations and push (src/http/routes/console-push.ts). */

const enc = encodeURIComponent;

export const searchFields: Record<string, string> = {
  installationId: 'installationId',
  deviceToken: 'device token',
  vendor: 'vendor',
  channel: 'channel',
  user: 'user (id, username or email)',
};

export interface InstallationsView {
  by: string;
  q: string;
  vendors: Array<{ name: string; count: number }>;
  valid: number;
  invalid: number;
  rows: Record<string, unknown>[];
  error?: string;
}

function stat(label: string, count: number): string {
  return `<li><strong>${count.toLocaleString('en')}</strong>${h(label)}</li>`;
}

export function installationsPage(reply: FastifyReply, session: PageSession, app: AppRecord, view: InstallationsView, status = 200): FastifyReply {
  const objectBase = classBase(app, '_Installation');
  const rows = view.rows
    .map((row) => {
      const user = row.user as { objectId?: string } | undefined;
      return `<tr><td data-label="installationId"><a href="${objectBase}/${enc(String(row.objectId))}"><code>${h(cellText(row.installationId ?? row.objectId))}</code></a></td>` +
        `<td data-label="Device">${h(cellText(row.deviceType))}</td><td data-label="Vendor">${h(cellText(row.vendor ?? 'own channel'))}</td>` +
        `<td data-label="Channels">${h(Array.isArray(row.channels) ? row.channels.join(', ') : '')}</td>` +
        `<td data-label="User">${user?.objectId ? `<code>${h(user.objectId)}</code>` : ''}</td>` +
        `<td data-label="State">${row.valid === false ? 'invalid' : 'valid'}</td><td data-label="Updated">${h(cellText(row.updatedAt))}</td></tr>`;
    })
    .join('\n');
  const options = Object.entries(searchFields).map(([v, t]) => `<option value="${v}"${v === view.by ? ' selected' : ''}>${h(t)}</option>`).join('');
  const main = `<div class="card"><h1>Installations</h1>
<ul class="stats" aria-label="Installations per vendor">${view.vendors.map((v) => stat(v.name, v.count)).join('')}</ul>
<ul class="stats" aria-label="Installations per state">${stat('valid', view.valid)}${stat('invalid tokens', view.invalid)}</ul>
<form method="get" action="${appBase(app)}/installations" class="inline" aria-label="Search installations">
<div class="narrow"><label for="by">Search by</label><select id="by" name="by">${options}</select></div>
<div><label for="q">Value</label><input id="q" name="q" value="${h(view.q)}" required></div>
<button type="submit">Search</button></form></div>
<div class="card">${view.error ? notice('error', view.error) : ''}<h2>${view.q ? `Matching ${h(searchFields[view.by] ?? view.by)} ${h(view.q)}` : 'Latest updated'}</h2>
${view.rows.length ? `<div class="scroll"><table><thead><tr><th scope="col">installationId</th><th scope="col">Device</th><th scope="col">Vendor</th><th scope="col">Channels</th><th scope="col">User</th><th scope="col">State</th><th scope="col">Updated</th></tr></thead><tbody>
${rows}
</tbody></table></div>` : '<p>No installations.</p>'}</div>`;
  return appPage(reply, session, app, 'installations', 'Installations', main, status);
}

export interface ComposeInput {
  target: string;
  channels: string;
  where: string;
  users: string;
  alert: string;
  title: string;
  badge: string;
  custom: string;
  pushTime: string;
  expiresIn: string;
  prod: string;
}

export interface PushView {
  input: ComposeInput;
  notifications: Array<Record<string, any>>;
  scheduled: Array<Record<string, any>>;
  error?: string;
  message?: string;
  /** After "Check reach": the devices, and the body to send as reviewed. */
  review?: { devices: number; body: Record<string, unknown> };
}

function radio(name: string, value: string, label: string, current: string): string {
  return `<label class="check"><input type="radio" name="${name}" value="${value}"${value === current ? ' checked' : ''}> ${h(label)}</label>`;
}

function routeSummary(routes: Record<string, any> | undefined): string {
  if (!routes) return '';
  return Object.entries(routes)
    .filter(([, r]) => r.devices > 0)
    .map(([name, r]) => name === 'lc'
      ? `own channel ${r.successes}/${r.devices}`
      : `${name} ${r.successes} sent, ${r.failures} failed, ${r.invalidTokens} invalid`)
    .join('; ');
}

function time(iso: unknown): string {
  return typeof iso === 'string' ? iso.replace('T', ' ').slice(0, 16) + ' UTC' : '';
}

export function pushPage(reply: FastifyReply, session: PageSession, app: AppRecord, view: PushView, status = 200): FastifyReply {
  const base = `${appBase(app)}/push`;
  const admin = session.operator.role === 'admin';
  const { input } = view;
  const compose = admin
    ? `<div class="card"><h1>Send a push</h1>
${view.error ? notice('error', view.error) : ''}${view.message ? notice('success', view.message) : ''}
<form method="post" action="${base}/review">${csrfField(session)}
<fieldset><legend>Target</legend>
${radio('target', 'all', 'All installations', input.target)}${radio('target', 'channels', 'Channels', input.target)}${radio('target', 'where', 'A where on _Installation', input.target)}${radio('target', 'users', 'Chosen users', input.target)}
</fieldset>
<div class="grid2">
<div><label for="channels">Channels (comma-separated)</label><input id="channels" name="channels" value="${h(input.channels)}" placeholder="news, sports"></div>
<div><label for="users">Users (ids, usernames or emails, comma-separated)</label><input id="users" name="users" value="${h(input.users)}"></div>
</div>
<label for="push-where">where (JSON)</label><textarea id="push-where" name="where" rows="3" placeholder='{"deviceType": "android"}'>${h(input.where)}</textarea>
<div class="grid2">
<div><label for="alert">Alert</label><input id="alert" name="alert" value="${h(input.alert)}"></div>
<div><label for="title">Title</label><input id="title" name="title" value="${h(input.title)}"></div>
<div><label for="badge">Badge</label><input id="badge" name="badge" value="${h(input.badge)}" placeholder="Increment or a number"></div>
<div><label for="prod">Environment</label><select id="prod" name="prod"><option value="prod"${input.prod !== 'dev' ? ' selected' : ''}>production</option><option value="dev"${input.prod === 'dev' ? ' selected' : ''}>development</option></select></div>
</div>
<label for="custom">Custom data (JSON object, merged into data)</label><textarea id="custom" name="custom" rows="3" placeholder='{"url": "app://news/42"}'>${h(input.custom)}</textarea>
<div class="grid2">
<div><label for="push-time">Send at (UTC, empty for now)</label><input id="push-time" name="pushTime" type="datetime-local" value="${h(input.pushTime)}"></div>
<div><label for="expires-in">Expires after (seconds, empty for never)</label><input id="expires-in" name="expiresIn" inputmode="numeric" value="${h(input.expiresIn)}"></div>
</div>
<button type="submit">Check reach</button></form></div>`
    : '';
  const review = view.review && admin
    ? `<div class="card" id="review"><h2>Ready to send</h2>
<p role="status" class="notice success">This push will reach <strong>${view.review.devices.toLocaleString('en')}</strong> device${view.review.devices === 1 ? '' : 's'}.</p>
<pre>${h(JSON.stringify(view.review.body, null, 2))}</pre>
<form method="post" action="${base}/send">${csrfField(session)}<input type="hidden" name="body" value="${h(JSON.stringify(view.review.body))}">
<button type="submit">Send to ${view.review.devices.toLocaleString('en')} device${view.review.devices === 1 ? '' : 's'}</button></form></div>`
    : '';
  const history = view.notifications
    .map((n) => `<tr><td data-label="Created"><a href="${base}/${enc(String(n.objectId))}">${h(time(n.createdAt))}</a></td><td data-label="Status">${h(String(n.status))}</td>` +
      `<td data-label="Alert">${h(cellText(n.data?.alert ?? n.data?.title ?? ''))}</td><td data-label="Devices" class="count">${n.devices}</td>` +
      `<td data-label="Sent" class="count">${n.successes}</td><td data-label="Failed" class="count">${n.errors}</td><td data-label="Invalid tokens" class="count">${n.invalidTokens}</td>` +
      `<td data-label="Routes" class="wrap">${h(routeSummary(n.routes))}</td></tr>`)
    .join('\n');
  const scheduled = view.scheduled
    .map((job) => `<tr><td data-label="Sends at">${h(time(new Date(Number(job.expire_time)).toISOString()))}</td><td data-label="Alert">${h(cellText(job.push_msg?.msg?.alert ?? ''))}</td>` +
      `<td data-label="Target"><code>${h(JSON.stringify(job.push_msg?.where?.query ?? {}))}</code></td>` +
      (admin ? `<td data-label="Cancel"><form method="post" action="${base}/scheduled/${enc(String(job.id))}/cancel">${csrfField(session)}<button type="submit" class="secondary">Cancel</button></form></td>` : '') + '</tr>')
    .join('\n');
  // The review first: on a phone the count is seen without scrolling past the form it came from.
  const main = `${review}${compose}
${view.scheduled.length ? `<div class="card"><h2>Scheduled</h2><table><thead><tr><th scope="col">Sends at</th><th scope="col">Alert</th><th scope="col">Target</th>${admin ? '<th scope="col"><span class="skip">Cancel</span></th>' : ''}</tr></thead><tbody>
${scheduled}
</tbody></table></div>` : ''}
<div class="card"><h2>History</h2>${!admin && view.message ? notice('success', view.message) : ''}
${view.notifications.length ? `<div class="scroll"><table><thead><tr><th scope="col">Created</th><th scope="col">Status</th><th scope="col">Alert</th><th scope="col" class="count">Devices</th><th scope="col" class="count">Sent</th><th scope="col" class="count">Failed</th><th scope="col" class="count">Invalid tokens</th><th scope="col">Routes</th></tr></thead><tbody>
${history}
</tbody></table></div>` : '<p>No push sent yet.</p>'}</div>`;
  return appPage(reply, session, app, 'push', 'Push', main, status);
}

export function notificationPage(reply: FastifyReply, session: PageSession, app: AppRecord, n: Record<string, any>): FastifyReply {
  const base = `${appBase(app)}/push`;
  const routes = Object.entries((n.routes ?? {}) as Record<string, any>)
    .map(([name, r]) => `<tr><th scope="row">${name === 'lc' ? 'own channel' : h(name)}</th><td data-label="Devices" class="count">${r.devices}</td><td data-label="Sent" class="count">${r.successes}</td>` +
      `<td data-label="Failed" class="count">${r.failures ?? 0}</td><td data-label="Invalid tokens" class="count">${r.invalidTokens ?? 0}</td><td data-label="Pending / dropped" class="count">${r.pending ?? r.dropped ?? 0}</td></tr>`)
    .join('\n');
  const main = `<div class="card"><p class="crumbs"><a href="${base}">Push</a></p><h1>Push ${h(String(n.objectId))}</h1>
<ul class="stats">${['devices', 'successes', 'errors', 'invalidTokens'].map((k) => `<li><strong>${Number(n[k] ?? 0).toLocaleString('en')}</strong>${{ devices: 'devices', successes: 'sent', errors: 'failed', invalidTokens: 'invalid tokens' }[k]}</li>`).join('')}</ul>
<p>Status <strong>${h(String(n.status))}</strong>, created ${h(time(n.createdAt))}, sends at ${h(time(n['push-time']))}${n.expiration_time ? `, expires ${h(time(n.expiration_time))}` : ''}.</p>
${routes ? `<table><thead><tr><th scope="col">Route</th><th scope="col" class="count">Devices</th><th scope="col" class="count">Sent</th><th scope="col" class="count">Failed</th><th scope="col" class="count">Invalid tokens</th><th scope="col" class="count">Pending / dropped</th></tr></thead><tbody>
${routes}
</tbody></table>` : ''}
<h2>Record</h2><pre>${h(JSON.stringify(n, null, 2))}</pre></div>`;
  return appPage(reply, session, app, 'push', `Push ${n.objectId}`, main);
}
