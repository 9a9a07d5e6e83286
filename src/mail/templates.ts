/**
 * Mail templates: a subject, a plain-text body and an HTML body, with the variables
 * `{{appname}}`, `{{username}}`, `{{email}}` and `{{link}}` (LeanCloud's template variables).
 * In the HTML body `{{name}}` is HTML-escaped and `{{{name}}}` is inserted as is; the subject
 * and the text body take values as they are.
 */

export type MailKind = 'verifyEmail' | 'passwordReset';

export interface MailTemplate {
  subject: string;
  text: string;
  html: string;
}

export type TemplatePart = keyof MailTemplate;

export interface MailVariables {
  appname: string;
  username: string;
  email: string;
  link: string;
}

export const templateVariables: readonly (keyof MailVariables)[] = ['appname', 'username', 'email', 'link'];

export const maxSubjectLength = 300;
export const maxBodyLength = 100_000;

const placeholder = /\{\{\{\s*([^{}]*?)\s*\}\}\}|\{\{\s*([^{}]*?)\s*\}\}/g;

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Fills the placeholders of one template part; unknown names render as nothing. */
export function renderPart(source: string, variables: MailVariables, part: TemplatePart): string {
  const rendered = source.replace(placeholder, (_match, raw: string | undefined, escaped: string | undefined) => {
    const name = (raw ?? escaped ?? '') as keyof MailVariables;
    const value = templateVariables.includes(name) ? variables[name] : '';
    return part === 'html' && escaped !== undefined ? escapeHtml(value) : value;
  });
  // A subject is one header line: a line break in a value must not start another.
  return part === 'subject' ? rendered.replace(/[\r\n]+/g, ' ').trim() : rendered;
}

export function renderTemplate(template: MailTemplate, variables: MailVariables): MailTemplate {
  return {
    subject: renderPart(template.subject, variables, 'subject'),
    text: renderPart(template.text, variables, 'text'),
    html: renderPart(template.html, variables, 'html'),
  };
}

/**
 * Why a custom template part cannot be used, or null when it can: the length limit, only the
 * known variables, one line for a subject, and the link in each body (a mail without it is useless).
 */
export function templatePartProblem(part: TemplatePart, source: string): string | null {
  if (part === 'subject') {
    if (source.trim() === '') return 'must not be empty';
    if (source.length > maxSubjectLength) return `must be at most ${maxSubjectLength} characters`;
    if (/[\r\n]/.test(source)) return 'must be one line';
  } else if (source.length > maxBodyLength) {
    return `must be at most ${maxBodyLength} characters`;
  }
  const names = [...source.matchAll(placeholder)].map((m) => m[1] ?? m[2]);
  const unknown = names.find((name) => !(templateVariables as readonly string[]).includes(name));
  if (unknown !== undefined) {
    return `uses the unknown variable {{${unknown}}} (known: ${templateVariables.map((v) => `{{${v}}}`).join(', ')})`;
  }
  if (part !== 'subject' && !names.includes('link')) return 'must contain {{link}}';
  return null;
}

const button =
  'display:inline-block;padding:12px 20px;background:#1a56db;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600';

function htmlMail(heading: string, paragraphs: string[], action: string, footer: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${heading}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2328">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:32px">
<h1 style="font-size:20px;margin:0 0 16px">${heading}</h1>
${paragraphs.map((p) => `<p style="font-size:16px;line-height:1.5;margin:0 0 16px">${p}</p>`).join('\n')}
<p style="margin:24px 0"><a href="{{link}}" style="${button}">${action}</a></p>
<p style="font-size:14px;line-height:1.5;color:#57606a;margin:0 0 8px">If the button does not work, copy this address into your browser:<br><a href="{{link}}" style="color:#1a56db;word-break:break-all">{{link}}</a></p>
<p style="font-size:14px;line-height:1.5;color:#57606a;margin:16px 0 0">${footer}</p>
</div>
</body>
</html>
`;
}

/** The built-in templates, used for every part an application has not set. */
export const defaultTemplates: Record<MailKind, MailTemplate> = {
  verifyEmail: {
    subject: 'Confirm your email address for {{appname}}',
    text: `Hello {{username}},

Please confirm that {{email}} is your email address for {{appname}} by opening this link:

{{link}}

The link is valid for one week. If you did not use this address with {{appname}}, you can ignore this mail.
`,
    html: htmlMail(
      'Confirm your email address',
      ['Hello {{username}},', 'Please confirm that <strong>{{email}}</strong> is your email address for {{appname}}.'],
      'Confirm email address',
      'The link is valid for one week. If you did not use this address with {{appname}}, you can ignore this mail.',
    ),
  },
  passwordReset: {
    subject: 'Reset your {{appname}} password',
    text: `Hello {{username}},

Someone asked to reset the password of your {{appname}} account ({{email}}). To choose a new password, open this link:

{{link}}

The link works once and is valid for 24 hours. If you did not ask for this, ignore this mail: your password stays as it is.
`,
    html: htmlMail(
      'Reset your password',
      [
        'Hello {{username}},',
        'Someone asked to reset the password of your {{appname}} account (<strong>{{email}}</strong>). To choose a new password, use the button below.',
      ],
      'Choose a new password',
      'The link works once and is valid for 24 hours. If you did not ask for this, ignore this mail: your password stays as it is.',
    ),
  },
};

/** The settings key of one part of one kind's template, e.g. `verifyEmailSubject`. */
export function templateSettingKey(kind: MailKind, part: TemplatePart): string {
  return `${kind}${part === 'html' ? 'Html' : part[0].toUpperCase() + part.slice(1)}`;
}

/** An application's template: its own parts where set (non-null), the built-in ones elsewhere. */
export function templateFor(kind: MailKind, custom: Record<string, unknown>): MailTemplate {
  const pick = (part: TemplatePart) => {
    const value = custom[templateSettingKey(kind, part)];
    return typeof value === 'string' ? value : defaultTemplates[kind][part];
  };
  return { subject: pick('subject'), text: pick('text'), html: pick('html') };
}
