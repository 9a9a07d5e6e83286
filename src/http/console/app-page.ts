import type { FastifyReply } from 'fastify';
import { isSecretVendorField, vendorNames, type AppSettings } from '../../apps/settings.ts';
import { credentialFields } from '../../push/vendors/protocols.ts';
import type { AppRecord } from '../../objects/types.ts';
import type { AppDeletion } from '../../storage/store.ts';
import { accountToggles, pushToggles, templateFields, type Toggle } from './app-settings-form.ts';
import { appNav } from './app-nav.ts';
import { banner, csrfField, date, document, h, send, type PageSession } from './pages.ts';

/** A key as the page shows it: an admin sees its last four characters, a viewer nothing of it. */
export function maskedKey(key: string, session: PageSession): string {
  return session.operator.role === 'admin' ? `••••••••${key.slice(-4)}` : '••••••••';
}

export interface Rotated {
  kind: 'appKey' | 'masterKey';
  key: string;
  until: number | null;
}

export interface AppPageView {
  app: AppRecord;
  /** Settings with every secret already masked for this operator. */
  settings: AppSettings;
  contents: AppDeletion;
  now: number;
  notice?: string;
  rotated?: Rotated;
  error?: string;
}

const kindName = { appKey: 'App key', masterKey: 'Master key' } as const;

function checkbox(toggle: Toggle, on: boolean, disabled: string): string {
  return `<div class="check"><input type="checkbox" id="${toggle.key}" name="${toggle.key}"${on ? ' checked' : ''}${disabled}>
<label for="${toggle.key}">${h(toggle.label)}<span class="hint">${h(toggle.hint)}</span></label></div>`;
}

function form(session: PageSession, appId: string, section: string, body: string, button: string): string {
  if (session.operator.role !== 'admin') return body;
  return `<form method="post" action="/console/apps/${h(appId)}/settings">${csrfField(session)}
<input type="hidden" name="section" value="${section}">
${body}
<button type="submit">${button}</button></form>`;
}

function keysCard(view: AppPageView, session: PageSession): string {
  const { app, now } = view;
  const retired = app.retiredKeys
    .filter((entry) => entry.until > now)
    .map((entry) => `<li>${kindName[entry.kind]} <code>${maskedKey(entry.key, session)}</code> accepted until ${date(entry.until)}</li>`)
    .join('');
  const rotate = session.operator.role === 'admin'
    ? `<h3>Rotate a key</h3>
<p class="muted">A new key replaces the current one. Clients in the field that still send the old key keep working during the grace period.</p>
<form method="post" action="/console/apps/${h(app.appId)}/rotate" class="inline">${csrfField(session)}
<div><label for="kind">Key</label><select id="kind" name="kind"><option value="appKey">App key</option><option value="masterKey">Master key</option></select></div>
<div><label for="grace">Old key accepted for</label><input id="grace" name="grace" value="7d" required pattern="\\d{1,6}[smhd]?" aria-describedby="grace-hint"></div>
<button type="submit">Rotate</button></form>
<p class="hint" id="grace-hint">A duration: 30m, 12h, 7d; 0 refuses the old key at once.</p>`
    : '';
  return `<div class="card"><h2>Keys</h2>
<dl class="keys"><dt>App ID</dt><dd><code>${h(app.appId)}</code></dd>
<dt>App key</dt><dd><code>${maskedKey(app.appKey, session)}</code></dd>
<dt>Master key</dt><dd><code>${maskedKey(app.masterKey, session)}</code></dd></dl>
${retired ? `<p>Old keys still accepted:</p><ul>${retired}</ul>` : ''}
${rotate}</div>`;
}

function rotatedNotice(rotated: Rotated): string {
  const until = rotated.until ? `The old key is accepted until ${date(rotated.until)}.` : 'The old key is refused from now on.';
  return `<div class="card notice success" role="status"><h2>New ${kindName[rotated.kind].toLowerCase()}</h2>
<p>Copy it now: the console does not show it again. ${until}</p>
<p><code class="secret">${h(rotated.key)}</code></p></div>`;
}

function smsCard(view: AppPageView, session: PageSession, disabled: string): string {
  const sms = view.settings.sms;
  const option = (value: string, text: string) => `<option value="${value}"${sms.provider === value ? ' selected' : ''}>${text}</option>`;
  const secret = sms.webhookSecret
    ? `<p class="hint">Set (<code>${h(sms.webhookSecret)}</code>). Leave empty to keep it.</p>
${session.operator.role === 'admin' ? '<div class="check"><input type="checkbox" id="forget" name="forgetWebhookSecret"><label for="forget">Forget the secret</label></div>' : ''}`
    : '<p class="hint">Not set.</p>';
  const body = `<label for="provider">Delivery</label><select id="provider" name="provider"${disabled}>${option('outbox', 'Outbox files (SMS_OUTBOX_DIR)')}${option('webhook', 'Signed webhook')}</select>
<label for="webhookUrl">Webhook URL</label><input id="webhookUrl" name="webhookUrl" type="url" value="${h(sms.webhookUrl ?? '')}"${disabled}>
${session.operator.role === 'admin' ? '<label for="webhookSecret">Webhook secret (write-only)</label><input id="webhookSecret" name="webhookSecret" type="password" autocomplete="new-password">' : '<p><strong>Webhook secret</strong></p>'}
${secret}
<label for="signature">Signature</label><input id="signature" name="signature" value="${h(sms.signature ?? '')}"${disabled}>
<label for="defaultCountryCode">Default country code</label><input id="defaultCountryCode" name="defaultCountryCode" value="${h(sms.defaultCountryCode)}" inputmode="numeric"${disabled}>`;
  return `<div class="card"><h2 id="sms">SMS</h2>${form(session, view.app.appId, 'sms', body, 'Save SMS settings')}</div>`;
}

function vendorCard(view: AppPageView, session: PageSession): string {
  const configured = Object.entries(view.settings.vendors).flatMap(([profile, byVendor]) =>
    Object.entries(byVendor).map(([vendor, creds]) => {
      const shown = Object.entries(creds).map(([name, value]) => `${h(name)}: <code>${h(value)}</code>`).join(', ');
      const remove = session.operator.role === 'admin'
        ? `<form method="post" action="/console/apps/${h(view.app.appId)}/settings" class="row-action">${csrfField(session)}
<input type="hidden" name="section" value="vendorRemove"><input type="hidden" name="profile" value="${h(profile)}"><input type="hidden" name="vendor" value="${h(vendor)}">
<button type="submit" class="secondary">Remove</button></form>`
        : '';
      return `<tr><td data-label="Profile">${h(profile)}</td><td data-label="Vendor">${h(vendor)}</td><td data-label="Credentials">${shown}</td><td data-label="">${remove}</td></tr>`;
    }),
  );
  const table = configured.length
    ? `<table><thead><tr><th scope="col">Profile</th><th scope="col">Vendor</th><th scope="col">Credentials</th><th scope="col"><span class="skip">Actions</span></th></tr></thead><tbody>${configured.join('')}</tbody></table>`
    : '<p>No vendor credentials yet.</p>';
  const forms = session.operator.role === 'admin'
    ? vendorNames.map((vendor) => {
        const fields = credentialFields[vendor]
          .map((name) => {
            const secret = isSecretVendorField(name);
            return `<label for="${vendor}-${name}">${h(name)}${secret ? ' (write-only)' : ''}</label><input id="${vendor}-${name}" name="${h(name)}"${secret ? ' type="password" autocomplete="new-password"' : ''}>`;
          })
          .join('\n');
        return `<details><summary>Set ${vendor} credentials</summary>
<form method="post" action="/console/apps/${h(view.app.appId)}/settings">${csrfField(session)}
<input type="hidden" name="section" value="vendor"><input type="hidden" name="vendor" value="${vendor}">
<label for="${vendor}-profile">Device profile</label><input id="${vendor}-profile" name="profile" value="_default" required>
${fields}
<p class="hint">A field left empty keeps its stored value.</p>
<button type="submit">Save ${vendor} credentials</button></form></details>`;
      }).join('\n')
    : '';
  return `<div class="card"><h2 id="vendors">Mixed push: vendor credentials</h2>${table}${forms}</div>`;
}

function templatesCard(view: AppPageView, session: PageSession, disabled: string): string {
  const settings = view.settings as unknown as Record<string, string | null>;
  const body = templateFields
    .map(({ key, label, multiline }) => {
      const value = h(settings[key] ?? '');
      const input = multiline
        ? `<textarea id="${key}" name="${key}" rows="4"${disabled}>${value}</textarea>`
        : `<input id="${key}" name="${key}" value="${value}"${disabled}>`;
      return `<label for="${key}">${label}</label>${input}`;
    })
    .join('\n');
  return `<div class="card"><h2 id="templates">Email templates</h2>
<p class="muted">Empty: the built-in text. Variables: <code>{{appname}}</code> <code>{{username}}</code> <code>{{email}}</code> <code>{{link}}</code>; each body must contain <code>{{link}}</code>.</p>
${form(session, view.app.appId, 'templates', body, 'Save templates')}</div>`;
}

function deleteCard(view: AppPageView, session: PageSession): string {
  if (session.operator.role !== 'admin') return '';
  const c = view.contents;
  return `<div class="card danger"><h2 id="delete">Delete this application</h2>
<p>This deletes <strong>${h(view.app.name)}</strong> and everything it holds: ${c.objects} objects in ${c.classes} classes, ${c.users} users,
${c.installations} installations, ${c.roles} roles and ${c.leaderboards} leaderboards, with their sessions, files' records, status inboxes and push history. It cannot be undone.</p>
<form method="post" action="/console/apps/${h(view.app.appId)}/delete">${csrfField(session)}
<label for="confirm">Type the application id <code>${h(view.app.appId)}</code> to confirm</label>
<input id="confirm" name="confirm" required autocomplete="off" spellcheck="false">
<button type="submit" class="destructive">Delete application</button></form></div>`;
}

export function appPage(reply: FastifyReply, session: PageSession, view: AppPageView, status = 200): FastifyReply {
  const { app, settings } = view;
  const disabled = session.operator.role === 'admin' ? '' : ' disabled';
  const toggleBody = (list: Toggle[]) => list.map((toggle) => checkbox(toggle, Boolean((settings as unknown as Record<string, unknown>)[toggle.key]), disabled)).join('\n');
  const notices = [
    view.error ? `<p class="notice error" role="alert">${h(view.error)}</p>` : '',
    view.notice ? `<p class="notice success" role="status">${h(view.notice)}</p>` : '',
  ].join('');
  const main = `${view.rotated ? rotatedNotice(view.rotated) : ''}<div class="card"><h1>${h(app.name)}</h1>
${appNav(app.appId, 'settings')}
<p class="muted">Created ${date(app.createdAt)}.${session.operator.role === 'admin' ? '' : ' You are a viewer: settings are shown read-only, secrets not at all.'}</p>
${notices}</div>
${keysCard(view, session)}
<div class="card"><h2 id="accounts">Users and sign-in</h2>
${form(session, app.appId, 'accounts', toggleBody(accountToggles), 'Save sign-in settings')}
<p class="hint">Login lockout: after 7 failed attempts within 15 minutes a user is locked for 15 minutes (fixed by the server; unlock a user on the Users page).</p></div>
<div class="card"><h2 id="push">Push</h2>
${form(session, app.appId, 'push', `${toggleBody(pushToggles)}
<label for="androidIntentHostname">Android intent host name</label><input id="androidIntentHostname" name="androidIntentHostname" value="${h(settings.androidIntentHostname ?? '')}"${disabled}>`, 'Save push settings')}</div>
${vendorCard(view, session)}
${smsCard(view, session, disabled)}
${templatesCard(view, session, disabled)}
${deleteCard(view, session)}`;
  return send(reply, status, document(app.name, banner(session, 'apps'), main));
}
