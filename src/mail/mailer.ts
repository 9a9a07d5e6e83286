import { mkdir, writeFile } from 'node:fs/promises';
import { resolve, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type Nodemailer from 'nodemailer';
import { onFirstUse } from '../lib/on-first-use.ts';

const nodemailer = onFirstUse<typeof Nodemailer>('nodemailer');
type Transport = ReturnType<typeof Nodemailer.createTransport>;

/** One mail, ready to go: the templates are already rendered. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends mail. Resolves once the mail was handed over (SMTP server or outbox file); rejects otherwise. */
export interface Mailer {
  /** Where mails go, for the log: `smtp://host:port` (no credentials) or the outbox folder. */
  readonly destination: string;
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

/** The few logger methods the mailer uses (pino's shape). */
export interface MailLogger {
  info(fields: object, message: string): void;
}

export interface MailerOptions {
  /** smtp://user:pass@host:587 or smtps://…:465; null writes mails to `outboxDir` instead. */
  smtpUrl: string | null;
  from: string;
  outboxDir: string;
  logger: MailLogger;
}

/** The SMTP_URL without its password, for log lines. */
export function describeSmtpUrl(smtpUrl: string): string {
  try {
    const url = new URL(smtpUrl);
    return `${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ''}`;
  } catch {
    return 'smtp (unparsable SMTP_URL)';
  }
}

/** Mail over SMTP with nodemailer; one connection per mail, with timeouts so a dead server cannot hang a request. */
class SmtpMailer implements Mailer {
  readonly destination: string;
  private readonly transport: Transport;
  private readonly from: string;

  constructor(options: { smtpUrl: string; from: string }) {
    this.destination = describeSmtpUrl(options.smtpUrl);
    this.from = options.from;
    this.transport = nodemailer().createTransport({
      url: options.smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: this.from, ...mail });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/**
 * For local use without SMTP: each mail becomes one .eml file (a complete RFC 5322 message that
 * any mail program opens) in the outbox folder. The files hold live links, so only the owner may read them.
 */
class OutboxMailer implements Mailer {
  readonly destination: string;
  private readonly from: string;
  private readonly logger: MailLogger;
  private composer: Transport | undefined;

  constructor(options: { outboxDir: string; from: string; logger: MailLogger }) {
    this.destination = resolve(options.outboxDir);
    this.from = options.from;
    this.logger = options.logger;
  }

  async send(mail: OutgoingMail): Promise<void> {
    this.composer ??= nodemailer().createTransport({ streamTransport: true, buffer: true });
    const info = await this.composer.sendMail({ from: this.from, ...mail });
    await mkdir(this.destination, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = join(this.destination, `${stamp}-${randomBytes(4).toString('hex')}.eml`);
    await writeFile(file, info.message as Buffer, { mode: 0o600 });
    this.logger.info({ file }, 'mail written to the outbox (SMTP_URL is not set)');
  }

  async close(): Promise<void> {}
}

export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) return new SmtpMailer({ smtpUrl: options.smtpUrl, from: options.from });
  return new OutboxMailer(options);
}
