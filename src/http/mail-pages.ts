import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { maxPasswordLength } from '../accounts/passwords.ts';

/**
 * The pages a user opens from a mail: plain HTML with one inline style sheet, no script, no
 * external resource, the application's name on each. They work in any browser, with or without
 * JavaScript, and read well with a screen reader (one h1, labelled fields, errors announced).
 */

const style = `
*{box-sizing:border-box}
body{margin:0;padding:2rem 1rem;background:#f4f5f7;color:#1f2328;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:28rem;margin:0 auto;background:#fff;border-radius:.5rem;padding:2rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
.app{margin:0 0 .25rem;color:#57606a;font-weight:600;font-size:.95rem}
h1{margin:0 0 1rem;font-size:1.5rem;line-height:1.25}
p{margin:0 0 1rem}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input{width:100%;padding:.6rem .7rem;font:inherit;color:inherit;border:1px solid #8c959f;border-radius:.375rem;background:#fff}
input:focus{outline:3px solid rgba(26,86,219,.35);outline-offset:0;border-color:#1a56db}
button{margin-top:1.5rem;width:100%;padding:.7rem 1rem;font:inherit;font-weight:600;color:#fff;background:#1a56db;border:0;border-radius:.375rem;cursor:pointer}
button:hover{background:#1646b5}
button:focus-visible{outline:3px solid #1f2328;outline-offset:2px}
.notice{padding:.75rem 1rem;border-radius:.375rem;border:1px solid}
.error{background:#fff1f0;border-color:#cf222e;color:#82071e}
.success{background:#effaf1;border-color:#1a7f37;color:#0f5323}
.hint{color:#57606a;font-size:.95rem}
`;

/** A page's one inline style sheet is allowed by its hash: nothing else may run or load, nor frame it. */
export function styleOnlyPolicy(css: string): string {
  const hash = createHash('sha256').update(css).digest('base64');
  return ["default-src 'none'", `style-src 'sha256-${hash}'`, "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"].join('; ');
}

const contentSecurityPolicy = styleOnlyPolicy(style);

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Headers for every response of a mailed link: the URL holds a secret, so it must not leave
 * through a Referer header nor stay in a cache; the page may not be framed.
 */
export function secretUrlHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'no-store')
    .header('X-Content-Type-Options', 'nosniff');
}

/** Everything before <body>: a phone-sized viewport, no indexing, the one style sheet. */
export function htmlHead(title: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>`;
}

function document(appName: string | null, title: string, body: string): string {
  const app = appName ? escapeHtml(appName) : null;
  return `${htmlHead(`${title}${appName ? ` – ${appName}` : ''}`, style)}
<body>
<main>
${app ? `<p class="app">${app}</p>\n` : ''}<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export function sendPage(reply: FastifyReply, status: number, appName: string | null, title: string, body: string): FastifyReply {
  return secretUrlHeaders(reply)
    .status(status)
    .header('Content-Security-Policy', contentSecurityPolicy)
    .header('X-Frame-Options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(document(appName, title, body));
}

export function verifiedPage(reply: FastifyReply, appName: string, email: string): FastifyReply {
  return sendPage(
    reply,
    200,
    appName,
    'Email address confirmed',
    `<p class="notice success" role="status">Thank you: <strong>${escapeHtml(email)}</strong> is now confirmed as the email address of your ${escapeHtml(appName)} account.</p>
<p class="hint">You can close this page.</p>`,
  );
}

export function linkFailedPage(reply: FastifyReply, appName: string | null, message: string, retry: string): FastifyReply {
  return sendPage(
    reply,
    400,
    appName,
    'This link cannot be used',
    `<p class="notice error" role="alert">${escapeHtml(message)}</p>
<p class="hint">${escapeHtml(retry)}</p>`,
  );
}

/** The form for a new password; it posts back to its own address, so it needs no script. */
export function resetFormPage(
  reply: FastifyReply,
  options: { appName: string; username: string; error?: string; status?: number },
): FastifyReply {
  const { appName, username, error } = options;
  const described = error ? ' aria-describedby="form-error" aria-invalid="true"' : '';
  return sendPage(
    reply,
    options.status ?? 200,
    appName,
    'Choose a new password',
    `<p>Enter a new password for your ${escapeHtml(appName)} account${username ? ` <strong>${escapeHtml(username)}</strong>` : ''}.</p>
${error ? `<p class="notice error" role="alert" id="form-error">${escapeHtml(error)}</p>\n` : ''}<form method="post">
<input type="text" name="username" value="${escapeHtml(username)}" autocomplete="username" hidden readonly>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required maxlength="${maxPasswordLength}" autofocus${described}>
<label for="confirm">Repeat the new password</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required maxlength="${maxPasswordLength}"${described}>
<button type="submit">Change password</button>
</form>`,
  );
}

export function passwordChangedPage(reply: FastifyReply, appName: string): FastifyReply {
  return sendPage(
    reply,
    200,
    appName,
    'Password changed',
    `<p class="notice success" role="status">Your ${escapeHtml(appName)} password has been changed.</p>
<p>Sign in with the new password. Devices that were signed in with the old password have to sign in again.</p>`,
  );
}
