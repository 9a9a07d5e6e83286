// The mail module: the file outbox used without SMTP_URL, and per-application templates
// (settings, validation, rendering with the variables appname, username, email, link).
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, uniqueName } from './helpers/accounts.ts';
import { address, startMailServer, type MailTestServer } from './helpers/mail.ts';
import { linkIn } from './fakes/smtp-sink.ts';
import { describeSmtpUrl } from '../src/mail/mailer.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { defaultTemplates, renderTemplate, templatePartProblem } from '../src/mail/templates.ts';
import { mailLinkLifetimes } from '../src/accounts/mail-links.ts';

describe('without SMTP_URL: the outbox folder', () => {
  let server: TestServer;
  let outbox: string;
  before(async () => {
    outbox = join(mkdtempSync(join(tmpdir(), 'roost-outbox-')), 'outbox');
    server = await startServer({ env: { OUTBOX_DIR: outbox } });
  });
  after(async () => {
    await server?.close();
    rmSync(join(outbox, '..'), { recursive: true, force: true });
  });

  test('each mail is one .eml file, readable by its owner only; the log names the folder', async () => {
    assert.ok(server.logs.some((line) => line.includes('SMTP_URL is not set') && line.includes(outbox)));
    await server.master.put('/1.1/settings', { verifyEmailOnSignup: true });
    const email = address('outbox');
    const user = await signUp(server.client, { email });
    await server.client.post('/1.1/requestPasswordReset', { email });
    let files: string[] = [];
    for (let i = 0; i < 50 && files.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      files = readdirSync(outbox).filter((name) => name.endsWith('.eml'));
    }
    assert.equal(files.length, 2);
    for (const name of files) assert.equal(statSync(join(outbox, name)).mode & 0o777, 0o600);
    const mails = await Promise.all(files.map((name) => simpleParser(readFileSync(join(outbox, name)))));
    const verify = mails.find((mail) => /Confirm/.test(mail.subject ?? ''));
    assert.ok(verify, 'the verification mail is in the outbox');
    assert.equal((verify.to as { text: string }).text, email);
    const link = linkIn({ text: verify.text ?? '' } as never);
    const res = await fetch(link);
    assert.equal(res.status, 200);
    assert.equal((await server.master.get(`/1.1/users/${user.objectId}`)).body.emailVerified, true);
    assert.ok(server.logs.some((line) => line.includes('mail written to the outbox')));
  });
});

describe('templates in the settings', () => {
  let t: MailTestServer;
  before(async () => {
    t = await startMailServer();
  });
  after(async () => {
    await t?.close();
  });

  test('the defaults: settings show null for every template key', async () => {
    const res = await t.master.get('/1.1/settings');
    for (const key of ['verifyEmailSubject', 'verifyEmailText', 'verifyEmailHtml', 'passwordResetSubject', 'passwordResetText', 'passwordResetHtml']) {
      assert.equal(res.body[key], null, key);
    }
  });

  test('an application\'s own subject, text and HTML are used, with the values filled in', async () => {
    await t.settings({
      verifyEmailOnSignup: true,
      verifyEmailSubject: 'Welcome to {{appname}}, {{ username }}',
      verifyEmailText: 'Open {{link}} to confirm {{email}}.',
      verifyEmailHtml: '<p>Hi {{username}}, <a href="{{link}}">confirm</a> {{{email}}}</p>',
    });
    const email = address('tpl');
    const username = `${uniqueName('x')}<b>`;
    await signUp(t.client, { email, username });
    const mail = await t.sink.waitFor(email);
    assert.equal(mail.subject, `Welcome to test, ${username}`);
    const link = linkIn(mail);
    assert.equal(mail.text.trim(), `Open ${link} to confirm ${email}.`);
    assert.ok(mail.html.includes(`Hi ${username.replace('<', '&#60;').replace('>', '&#62;')}, <a href="${link}">`), mail.html);

    // Only the parts set are custom: the reset mail keeps its built-in text.
    await t.client.post('/1.1/requestPasswordReset', { email });
    const reset = await t.sink.waitFor(email, 2);
    assert.equal(reset.subject, 'Reset your test password');
    // null puts the built-in text back.
    await t.settings({ verifyEmailSubject: null, verifyEmailText: null, verifyEmailHtml: null });
    assert.equal((await t.master.get('/1.1/settings')).body.verifyEmailSubject, null);
  });

  test('a template that cannot work is refused with a clear 400', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ verifyEmailText: 'Hello {{name}}: {{link}}' }, /unknown variable \{\{name\}\}/],
      [{ passwordResetText: 'No link here' }, /must contain \{\{link\}\}/],
      [{ passwordResetHtml: '<p>no link</p>' }, /must contain \{\{link\}\}/],
      [{ verifyEmailSubject: 'two\nlines' }, /one line/],
      [{ verifyEmailSubject: '' }, /must not be empty/],
      [{ verifyEmailSubject: 'x'.repeat(301) }, /at most 300/],
      [{ verifyEmailHtml: 42 }, /string or null/],
    ];
    for (const [patch, message] of cases) {
      const res = await t.master.put('/1.1/settings', patch);
      assert.equal(res.status, 400, JSON.stringify(patch));
      assert.equal(res.body.code, 111);
      assert.match(res.body.error, message);
    }
  });
});

describe('rendering', () => {
  const variables = { appname: 'Shop & Co', username: 'a"b', email: 'x@example.com', link: 'https://roost.example/1/resetPassword/T' };

  test('HTML escapes {{values}}, keeps {{{values}}}; text and subject take them as they are', () => {
    const out = renderTemplate({ subject: '{{appname}}\r\nBcc: x@evil', text: '{{appname}} {{link}}', html: '{{appname}} {{{appname}}}' }, variables);
    assert.equal(out.subject, 'Shop & Co Bcc: x@evil', 'a subject is one line');
    assert.equal(out.text, 'Shop & Co https://roost.example/1/resetPassword/T');
    assert.equal(out.html, 'Shop &#38; Co Shop & Co');
  });

  test('the built-in templates pass their own checks and mention the link lifetimes', () => {
    for (const template of Object.values(defaultTemplates)) {
      for (const part of ['subject', 'text', 'html'] as const) assert.equal(templatePartProblem(part, template[part]), null);
    }
    assert.match(defaultTemplates.verifyEmail.text, /one week/);
    assert.match(defaultTemplates.passwordReset.text, /24 hours/);
    assert.equal(mailLinkLifetimes.verifyEmail, 7 * 24 * 3_600_000);
    assert.equal(mailLinkLifetimes.passwordReset, 24 * 3_600_000);
  });

  test('SMTP_URL and PUBLIC_URL are checked at start', () => {
    assert.throws(() => loadConfig({ SMTP_URL: 'mail.example.com' }), ConfigError);
    assert.throws(() => loadConfig({ SMTP_URL: 'http://mail.example.com' }), ConfigError);
    assert.throws(() => loadConfig({ PUBLIC_URL: 'roost.example.com' }), ConfigError);
    const config = loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', PUBLIC_URL: 'https://roost.example.com/' });
    assert.equal(config.smtpUrl, 'smtps://u:p@mail.example.com:465');
    assert.equal(config.publicUrl, 'https://roost.example.com');
  });

  test('an SMTP_URL is logged without its credentials', () => {
    assert.equal(describeSmtpUrl('smtps://user:secret@mail.example.com:465'), 'smtps://mail.example.com:465');
  });
});
