import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from './client.ts';

/** A fresh directory for the SMS outbox of one test server. */
export function smsOutboxDir(): string {
  return mkdtempSync(join(tmpdir(), 'roost-sms-'));
}

export interface OutboxMessage {
  to: string;
  code: string;
  purpose: string;
  ttlMinutes: number;
  text: string;
  type: string;
}

/** Every message in the outbox, oldest first. */
export function outbox(dir: string): OutboxMessage[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json')).sort();
  } catch {
    return [];
  }
  return names.map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as OutboxMessage);
}

/** The code of the newest message to a number (E.164). */
export function lastCode(dir: string, phone: string): string {
  const message = outbox(dir).filter((m) => m.to === phone).at(-1);
  if (!message) throw new Error(`no SMS to ${phone} in ${dir}`);
  return message.code;
}

let counter = 0;
/** A mainland-China mobile number no other test uses (E.164). */
export function uniquePhone(): string {
  counter += 1;
  const tail = `${Date.now() % 1e6}${counter}`.padStart(8, '0').slice(-8);
  return `+86139${tail}`;
}

/**
 * Proves the app key with X-LC-Key instead of a timestamped signature, for servers whose
 * ManualClock jumps ahead of real time.
 */
export class KeyClient extends Client {
  override authHeaders(): Record<string, string> {
    return { 'X-LC-Id': this.appId, 'X-LC-Key': this.masterKey ? `${this.masterKey},master` : this.appKey };
  }
  override withSession(session: string | undefined): KeyClient {
    return new KeyClient({ url: this.url, appId: this.appId, appKey: this.appKey, masterKey: this.masterKey, session });
  }
}
