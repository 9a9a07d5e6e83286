import { randomBytes } from 'node:crypto';
import type { Client } from './client.ts';

export interface SignedUpUser {
  objectId: string;
  username: string;
  password: string;
  sessionToken: string;
  /** The app-key client of the test, sending this user's session. */
  client: Client;
  body: Record<string, unknown>;
}

export function uniqueName(prefix = 'user'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Signs a new user up through POST /1.1/users; for tests that need users and their sessions. */
export async function signUp(client: Client, fields: Record<string, unknown> = {}): Promise<SignedUpUser> {
  const username = (fields.username as string | undefined) ?? uniqueName();
  const password = (fields.password as string | undefined) ?? `pw-${randomBytes(8).toString('hex')}`;
  knownPasswords.add(password);
  const response = await client.withSession(undefined).post('/1.1/users', { ...fields, username, password });
  if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${response.text}`);
  const { objectId, sessionToken } = response.body;
  return { objectId, username, password, sessionToken, client: client.withSession(sessionToken), body: response.body };
}

/** Every password the account helpers chose in this process, for the checks below. */
export const knownPasswords = new Set<string>();

/** Fails if any log line holds a known password, a password hash or one of the given tokens. */
export function assertNoSecretsIn(lines: readonly string[], extra: readonly string[] = []): void {
  const secrets = [...knownPasswords, ...extra].filter((secret) => secret.length >= 6);
  for (const line of lines) {
    if (line.includes('$argon2')) throw new Error(`a password hash reached a log line: ${line.slice(0, 200)}`);
    for (const secret of secrets) {
      if (line.includes(secret)) throw new Error(`a secret reached a log line: ${line.slice(0, 200)}`);
    }
  }
}
