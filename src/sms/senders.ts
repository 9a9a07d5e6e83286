import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { hmacHex } from '../lib/crypto.ts';

/** One text message carrying a code. */
export interface SmsMessage {
  appId: string;
  appName: string;
  /** E.164 number. */
  to: string;
  code: string;
  /** sms (generic), login, verify, reset. */
  purpose: string;
  ttlMinutes: number;
  /** sms or voice, as the client asked. */
  type: 'sms' | 'voice';
  /** The ready text; a gateway may use template and vars instead. */
  text: string;
  template: string | null;
  sign: string | null;
}

/** Delivers a message or throws; the code is in the message and nowhere else (never a log line). */
export interface SmsSender {
  send(message: SmsMessage): Promise<void>;
}

/**
 * The default: each message is a JSON file in a directory (SMS_OUTBOX_DIR), for development,
 * tests, or a separate process that forwards the files to a gateway.
 */
export class OutboxSmsSender implements SmsSender {
  private readonly dir: string;

  constructor(options: { dir: string }) {
    this.dir = options.dir;
  }

  async send(message: SmsMessage): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const name = `${Date.now()}-${randomBytes(6).toString('hex')}.json`;
    await writeFile(join(this.dir, name), JSON.stringify({ ...message, sentAt: new Date().toISOString() }, null, 2), {
      mode: 0o600,
    });
  }
}

/**
 * POSTs each message as JSON to a URL of the developer's (their SMS gateway adapter). The body
 * is signed: X-Roost-Signature: sha256=<hex HMAC-SHA256 of the body with the webhook secret>.
 * Any answer but 2xx, or none within 10 s, is a failed send (code 602).
 */
export class WebhookSmsSender implements SmsSender {
  private readonly url: string;
  private readonly secret: string | null;
  private readonly fetcher: typeof fetch;

  constructor(options: { url: string; secret: string | null; fetch?: typeof fetch }) {
    this.url = options.url;
    this.secret = options.secret;
    this.fetcher = options.fetch ?? fetch;
  }

  async send(message: SmsMessage): Promise<void> {
    const body = JSON.stringify(message);
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.secret) headers['X-Roost-Signature'] = `sha256=${hmacHex(this.secret, body)}`;
    const response = await this.fetcher(this.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    await response.arrayBuffer().catch(() => undefined);
    if (response.status < 200 || response.status >= 300) throw new Error(`SMS webhook answered HTTP ${response.status}`);
  }
}
