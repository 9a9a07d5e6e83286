import type { FastifyInstance } from 'fastify';
import type { AppRegistry } from '../../apps/registry.ts';
import type { OperatorService } from '../../console/operators.ts';
import type { AppRecord } from '../../objects/types.ts';

/** What the console's per-application route groups (data browser, push) are handed. */
export interface ConsoleKit {
  /** The root instance, whose REST API MasterRest calls. */
  root: FastifyInstance;
  operators: OperatorService;
  registry: AppRegistry;
}

export interface RestAnswer {
  status: number;
  body: any;
}

/**
 * The console acts on an application through its REST API with the master key, in process
 * (Fastify inject): the same routes, parsers, class rules and services a client with the master key
 * meets, so the console has no second copy of query, ACL or push logic and cannot bypass them.
 */
export class MasterRest {
  readonly app: AppRecord;
  private readonly server: FastifyInstance;

  constructor(server: FastifyInstance, app: AppRecord) {
    this.server = server;
    this.app = app;
  }

  async call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: { query?: Record<string, string>; body?: unknown } = {}): Promise<RestAnswer> {
    const search = options.query ? `?${new URLSearchParams(options.query)}` : '';
    const response = await this.server.inject({
      method,
      url: `/1.1${path}${search}`,
      headers: { 'content-type': 'application/json', 'x-lc-id': this.app.appId, 'x-lc-key': `${this.app.masterKey},master` },
      payload: method === 'GET' ? undefined : JSON.stringify(options.body ?? {}),
    });
    return { status: response.statusCode, body: response.body === '' ? null : JSON.parse(response.body) };
  }

  /** call, throwing the API's own error (its code and words) when it refused. */
  async ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: { query?: Record<string, string>; body?: unknown } = {}): Promise<any> {
    const answer = await this.call(method, path, options);
    if (answer.status >= 400) throw restError(answer);
    return answer.body;
  }
}

/** An error the REST API answered, kept as it was worded (status, code, message) for the console's page or JSON. */
export class RestError extends Error {
  readonly status: number;
  readonly code: number;

  constructor(status: number, code: number, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }

  toBody(): { code: number; error: string } {
    return { code: this.code, error: this.message };
  }
}

export function restError(answer: RestAnswer): RestError {
  const code = typeof answer.body?.code === 'number' ? answer.body.code : answer.status;
  const message = typeof answer.body?.error === 'string' ? answer.body.error : `The request failed (${answer.status}).`;
  return new RestError(answer.status, code, message);
}

/** A JSON object typed into a form field; `what` names it in the message ("The where is not valid JSON: …"). */
export function formJsonObject(raw: string, what: string, plural = false): Record<string, unknown> {
  const verb = plural ? 'are' : 'is';
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new RestError(400, 107, `The ${what} ${verb} not valid JSON: ${error instanceof Error ? error.message : String(error)}.`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RestError(400, 107, `The ${what} must be a JSON object.`);
  return value as Record<string, unknown>;
}
