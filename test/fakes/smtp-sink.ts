import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

/** A mail as the sink received and parsed it. */
export interface ReceivedMail {
  /** Envelope recipients (RCPT TO). */
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  raw: string;
}

/**
 * A real SMTP server on loopback that keeps every mail it receives, parsed with mailparser,
 * so tests see exactly what a mail client would. No TLS, no auth: smtp://127.0.0.1:<port>.
 */
export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  private readonly server: SMTPServer;
  private waiters: Array<() => void> = [];
  /** When set, every mail is refused with a permanent error (to test a failing mail server). */
  refuse = false;
  port = 0;

  constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (this.refuse) return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw)
            .then((parsed) => {
              this.mails.push({
                to: session.envelope.rcptTo.map((r) => r.address),
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                subject: parsed.subject ?? '',
                text: parsed.text ?? '',
                html: typeof parsed.html === 'string' ? parsed.html : '',
                raw,
              });
              for (const wake of this.waiters.splice(0)) wake();
              callback();
            })
            .catch((error: Error) => callback(error));
        });
      },
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Mails sent to that address so far. */
  to(address: string): ReceivedMail[] {
    return this.mails.filter((mail) => mail.to.includes(address));
  }

  /** Waits for the `count`-th mail to that address (1 = the first). */
  async waitFor(address: string, count = 1, timeoutMs = 10_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mails = this.to(address);
      if (mails.length >= count) return mails[count - 1];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no mail #${count} to ${address} within ${timeoutMs} ms (got ${mails.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Gives a background send time to arrive, then reports how many mails that address got. */
  async countAfterQuiet(address: string, quietMs = 300): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    return this.to(address).length;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The link of a mail's plain-text body (the one line starting with http). */
export function linkIn(mail: ReceivedMail): string {
  const match = /https?:\/\/\S+/.exec(mail.text);
  if (!match) throw new Error(`no link in mail "${mail.subject}"`);
  return match[0];
}

/** The token at the end of a mailed link. */
export function tokenOf(link: string): string {
  return new URL(link).pathname.split('/').pop() ?? '';
}
