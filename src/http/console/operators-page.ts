import type { FastifyReply } from 'fastify';
import { renderSVG } from 'uqr';
import type { Operator, TotpEnrolment } from '../../console/operators.ts';
import { banner, csrfField, date, document, h, send, type PageSession } from './pages.ts';

export interface Shown {
  /** A password set by the console: shown on this answer only. */
  password?: { name: string; value: string };
  notice?: string;
  error?: string;
  /** TOTP recovery codes just made: shown on this answer only. */
  recoveryCodes?: string[];
}

function notices(shown: Shown): string {
  const password = shown.password
    ? `<div class="notice success" role="status"><p>Password for <strong>${h(shown.password.name)}</strong>. Copy it now: the console does not show it again.</p>
<p><code class="secret">${h(shown.password.value)}</code></p></div>`
    : '';
  return password +
    (shown.error ? `<p class="notice error" role="alert">${h(shown.error)}</p>` : '') +
    (shown.notice ? `<p class="notice success" role="status">${h(shown.notice)}</p>` : '');
}

function post(session: PageSession, path: string, body: string, button: string, style = 'secondary'): string {
  return `<form method="post" action="${path}" class="inline">${csrfField(session)}${body}<button type="submit" class="${style}">${button}</button></form>`;
}

function manage(session: PageSession, op: Operator): string {
  const path = `/console/operators/${encodeURIComponent(op.name)}`;
  const other = op.role === 'admin' ? 'viewer' : 'admin';
  return `<details><summary>Manage ${h(op.name)}</summary><div class="actions">
${post(session, `${path}/role`, `<input type="hidden" name="role" value="${other}">`, `Make ${other}`)}
${post(session, `${path}/password`, '', 'Set a new password')}
${op.totp ? post(session, `${path}/totp-reset`, '', 'Remove TOTP') : ''}
${op.name === session.operator.name ? '' : post(session, `${path}/delete`, '', `Delete ${h(op.name)}`, 'destructive')}
</div></details>`;
}

export function operatorsPage(reply: FastifyReply, session: PageSession, operators: Operator[], shown: Shown = {}, status = 200): FastifyReply {
  const admin = session.operator.role === 'admin';
  const rows = operators
    .map((op) => `<tr><td data-label="Name">${h(op.name)}</td><td data-label="Role">${op.role}</td><td data-label="TOTP">${op.totp ? 'on' : 'off'}</td>` +
      `<td data-label="Created">${date(op.createdAt)}</td>${admin ? `<td data-label="">${manage(session, op)}</td>` : ''}</tr>`)
    .join('\n');
  const create = admin
    ? `<div class="card"><h2>New operator</h2>
<form method="post" action="/console/operators">${csrfField(session)}
<div class="inline"><div><label for="op-name">Name</label><input id="op-name" name="name" required maxlength="64" pattern="[A-Za-z0-9._@\\-]{1,64}" autocomplete="off"></div>
<div><label for="op-role">Role</label><select id="op-role" name="role"><option value="viewer">viewer (reads, no secrets)</option><option value="admin">admin (everything)</option></select></div></div>
<p class="hint">A password is generated and shown once; the operator can add TOTP under “Account”.</p>
<button type="submit">Create operator</button></form></div>`
    : '';
  const main = `<div class="card"><h1>Operators</h1>
${notices(shown)}
<table><thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">TOTP</th><th scope="col">Created</th>${admin ? '<th scope="col"><span class="skip">Manage</span></th>' : ''}</tr></thead>
<tbody>
${rows}
</tbody></table>
<p class="muted">On the server: <code>roost operator create|passwd|delete|totp-reset NAME</code>.</p></div>
${create}`;
  return send(reply, status, document('Operators', banner(session, 'operators'), main));
}

function recoveryCodes(codes: string[]): string {
  return `<div class="notice success" role="status"><h2>Recovery codes</h2>
<p>Keep these somewhere safe, apart from your phone: each one signs you in once in place of a code from the app. The console does not show them again.</p>
<ul class="codes">${codes.map((code) => `<li><code class="secret">${h(code)}</code></li>`).join('')}</ul></div>`;
}

/** The operator's own account: TOTP (set up, or on with its recovery codes left) and codes just made. */
export function accountPage(reply: FastifyReply, session: PageSession, totp: { recoveryCodesLeft: number } | null, enrolment: TotpEnrolment | null, shown: Shown = {}, status = 200): FastifyReply {
  const enrol = enrolment
    ? `<h2>Set up TOTP</h2>
<ol><li>Scan the code with an authenticator app (or enter the key by hand).</li><li>Enter the 6-digit code it shows to confirm.</li></ol>
<div class="qr" role="img" aria-label="QR code of the authenticator URI">${renderSVG(enrolment.uri, { border: 2 })}</div>
<dl class="keys"><dt>Key</dt><dd><code>${h(enrolment.secret.replace(/(.{4})/g, '$1 ').trim())}</code></dd>
<dt>URI</dt><dd><code>${h(enrolment.uri)}</code></dd></dl>
<form method="post" action="/console/account/totp/confirm" class="inline">${csrfField(session)}
<div><label for="code">Code from the app</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" required autofocus></div>
<button type="submit">Confirm</button></form>`
    : totp
      ? `<p>TOTP is <strong>on</strong>: sign-in asks for a code from your authenticator app. Without the phone, sign in with a recovery code in its place, or ask an admin to remove TOTP (Operators page, or <code>roost operator totp-reset</code>).</p>
<p>Recovery codes left: <strong>${totp.recoveryCodesLeft}</strong>.</p>
<form method="post" action="/console/account/recovery-codes">${csrfField(session)}<button type="submit" class="secondary">New recovery codes</button></form>`
      : `<p>TOTP is <strong>off</strong>. With it on, sign-in asks for a 6-digit code from an authenticator app as well as the password.</p>
<form method="post" action="/console/account/totp">${csrfField(session)}<button type="submit">Set up TOTP</button></form>`;
  const main = `<div class="card"><h1>Your account</h1>
<p>${h(session.operator.name)}, ${session.operator.role}.</p>
${notices(shown)}
${shown.recoveryCodes ? recoveryCodes(shown.recoveryCodes) : ''}
${enrol}</div>`;
  return send(reply, status, document('Your account', banner(session, 'account'), main));
}
