import { Client } from './client.ts';
import { ManualClock, startServer, type TestServer } from './harness.ts';
import { SmtpSink } from '../fakes/smtp-sink.ts';

/**
 * Proves the key with X-LC-Key (no timestamp), so requests stay valid while a test moves the
 * server's clock by days; sessions it hands out keep doing the same.
 */
export class KeyClient extends Client {
  override authHeaders(): Record<string, string> {
    return { 'X-LC-Id': this.appId, 'X-LC-Key': this.masterKey ? `${this.masterKey},master` : this.appKey };
  }

  override withSession(session: string | undefined): KeyClient {
    return new KeyClient({ url: this.url, appId: this.appId, appKey: this.appKey, masterKey: this.masterKey, session });
  }
}

export interface MailTestServer {
  server: TestServer;
  sink: SmtpSink;
  clock: ManualClock;
  client: KeyClient;
  master: KeyClient;
  settings(patch: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

export const mailFrom = 'Roost Test <accounts@roost.test>';

/** Roost with a real SMTP sink on loopback and a clock the test moves. */
export async function startMailServer(): Promise<MailTestServer> {
  const sink = await new SmtpSink().start();
  const clock = new ManualClock(Date.now());
  const server = await startServer({ clock, env: { SMTP_URL: sink.url, MAIL_FROM: mailFrom } });
  const client = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey });
  const master = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey, masterKey: server.masterKey });
  return {
    server,
    sink,
    clock,
    client,
    master,
    async settings(patch) {
      const res = await master.put('/1.1/settings', patch);
      if (res.status !== 200) throw new Error(`settings refused: ${res.status} ${res.text}`);
    },
    async close() {
      await server.close();
      await sink.close();
    },
  };
}

let counter = 0;
/** A fresh address for one test. */
export function address(prefix = 'user'): string {
  counter += 1;
  return `${prefix}.${process.pid}.${counter}.${Math.random().toString(36).slice(2, 8)}@mail.roost.test`;
}
