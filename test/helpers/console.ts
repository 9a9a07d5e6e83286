// A browser-less console client: keeps the session cookie and the CSRF token as the pages would.
import type { OperatorService } from '../../src/console/operators.ts';

export interface ConsoleResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export const operatorPassword = 'correct horse battery';

export class ConsoleClient {
  readonly url: string;
  cookie = '';
  csrf = '';
  /** The Set-Cookie header of the last answer that set one. */
  setCookie = '';

  constructor(url: string) {
    this.url = url;
  }

  async request(method: string, path: string, options: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<ConsoleResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookie) headers.cookie = this.cookie;
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    const response = await fetch(this.url + path, { method, headers, body, redirect: 'manual' });
    const set = response.headers.get('set-cookie');
    if (set) {
      this.setCookie = set;
      const pair = set.split(';')[0];
      this.cookie = /max-age=0/i.test(set) ? '' : pair;
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // an HTML page
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  async signIn(name: string, password = operatorPassword): Promise<ConsoleResponse> {
    const res = await this.request('POST', '/console/api/sign-in', { json: { name, password } });
    if (res.status === 200) this.csrf = res.body.csrfToken;
    return res;
  }

  /** A change as the console's pages make it: with the session's CSRF token. */
  change(method: string, path: string, json: unknown = {}): Promise<ConsoleResponse> {
    return this.request(method, path, { json, headers: { 'x-csrf-token': this.csrf } });
  }
}

/** Creates an operator as `roost operator create` does (the CLI has its own test). */
export async function makeOperator(operators: OperatorService, name: string, role: 'admin' | 'viewer'): Promise<void> {
  const outcome = await operators.create('test', name, role, operatorPassword);
  if (outcome !== 'done') throw new Error(`operator ${name}: ${outcome}`);
}

/** Creates an admin `ada` and a viewer `vic` and signs both in. */
export async function adminAndViewer(url: string, operators: OperatorService): Promise<{ ada: ConsoleClient; vic: ConsoleClient }> {
  await makeOperator(operators, 'ada', 'admin');
  await makeOperator(operators, 'vic', 'viewer');
  const ada = new ConsoleClient(url);
  const vic = new ConsoleClient(url);
  for (const [client, name] of [[ada, 'ada'], [vic, 'vic']] as const) {
    if ((await client.signIn(name)).status !== 200) throw new Error(`${name} could not sign in`);
  }
  return { ada, vic };
}
