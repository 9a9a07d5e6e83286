import type { FastifyInstance } from 'fastify';
import { catalogue, type ErrorKind } from '../../lib/errors.ts';
import type { SchemaError } from '../../lib/json-schema.ts';
import type { RouteEntry } from '../schema.ts';
import { refusalsOf } from '../console/routing.ts';
import { referencePage, referencePagePolicy } from './openapi-page.ts';

type Json = Record<string, unknown>;

/** Every `x-error` / `x-missing` a schema names, in the order they appear. */
export function errorsNamed(schema: unknown, into: Array<{ kind: ErrorKind; message: string }> = []) {
  if (Array.isArray(schema)) for (const item of schema) errorsNamed(item, into);
  else if (schema !== null && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'x-error' || key === 'x-missing') {
        const named = value as SchemaError;
        const kind = typeof named === 'string' ? named : named.kind;
        const message = (typeof named === 'string' ? undefined : named.message) ?? catalogue[kind].message;
        if (!into.some((e) => e.kind === kind && e.message === message)) into.push({ kind, message });
      } else errorsNamed(value, into);
    }
  }
  return into;
}

/** Routes behind the application keys answer these whatever they are (src/http/context.ts). */
const keyedErrors: ErrorKind[] = ['unauthorized'];

/** A wildcard's parameter (Fastify's `*`, the rest of the path) is named `path` in the document. */
const wildcard = 'path';

/** Fastify's path syntax in OpenAPI's: `/files/:appId/*` is `/files/{appId}/{path}`. */
export function openApiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, `{${wildcard}}`);
}

function parameters(entry: RouteEntry): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [['path', entry.schema?.params], ['query', entry.schema?.querystring]] as const) {
    const props = (schema as { properties?: Record<string, unknown>; required?: string[] } | undefined) ?? {};
    for (const [name, property] of Object.entries(props.properties ?? {})) {
      const shown = where === 'path' && name === '*' ? wildcard : name;
      out.push({ name: shown, in: where, required: where === 'path' || (props.required ?? []).includes(name), schema: property });
    }
  }
  // A path parameter a route has not described yet is still a parameter.
  for (const match of openApiPath(entry.url).matchAll(/\{(\w+)\}/g)) {
    if (!out.some((p) => p.in === 'path' && p.name === match[1])) out.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  return out;
}

function responses(entry: RouteEntry): Json {
  const named = errorsNamed(entry.schema ?? {});
  if (entry.url.startsWith('/1.1/')) {
    for (const kind of keyedErrors) named.push({ kind, message: catalogue[kind].message });
  }
  if (isConsole(entry)) named.unshift(...refusalsOf(entry.access ?? 'admin', entry.method).map(({ kind, message }) => ({ kind, message })));
  const out: Json = { '200': isConsolePage(entry) ? { description: 'An HTML page, or a 303 redirect after a change.', content: { 'text/html': {} } } : { description: 'Success.' } };
  for (const { kind, message } of named) {
    const { status, code } = catalogue[kind];
    const response = (out[String(status)] ??= {
      description: 'A catalogue error (README "Error codes").',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: {} } },
    }) as { content: { 'application/json': { examples: Json } } };
    response.content['application/json'].examples[`${kind}${Object.keys(response.content['application/json'].examples).filter((k) => k.startsWith(kind)).length || ''}`] = {
      value: { code, error: message },
    };
  }
  return out;
}

const isConsole = (entry: RouteEntry) => entry.url === '/console' || entry.url.startsWith('/console/');
const isConsolePage = (entry: RouteEntry) => isConsole(entry) && !entry.url.startsWith('/console/api/');

/**
 * The console (docs/console.md) is in the document as what it is: its pages take forms (urlencoded, or
 * multipart where the body's schema says `x-media`) and answer HTML to a browser, {code, error} to
 * anything else; /console/api answers JSON. Both need the operator's session cookie, and a change the
 * CSRF token, so each lists the console's own refusals before those of its schema.
 */
const consoleTag = {
  name: 'console',
  description:
    'The operator console: /console pages (HTML forms; a refusal is an HTML page for a browser, {code, error} otherwise) and the same actions as JSON under /console/api. ' +
    'Needs the session cookie of POST /console/api/sign-in; every change needs its CSRF token (X-CSRF-Token, or the form field _csrf) and the same origin.',
};

function requestBody(entry: RouteEntry): Json | undefined {
  const schema = entry.schema?.body as Json | undefined;
  if (!schema) return undefined;
  const media = isConsolePage(entry) ? ((schema['x-media'] as string | undefined) ?? 'application/x-www-form-urlencoded') : 'application/json';
  return { required: false, content: { [media]: { schema } } };
}

/** The OpenAPI 3.1 document of the routes as registered, schemas as they validate. */
export function openApiDocument(routes: RouteEntry[], version: string): Json {
  const paths: Record<string, Json> = {};
  for (const entry of routes) {
    const operation: Json = { ...(isConsole(entry) ? { tags: [consoleTag.name] } : {}), parameters: parameters(entry), responses: responses(entry) };
    const body = requestBody(entry);
    if (body) operation.requestBody = body;
    (paths[openApiPath(entry.url)] ??= {})[entry.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Roost', version, description: 'LeanCloud-compatible REST API. Errors answer {code, error}.' },
    tags: [consoleTag],
    paths,
    components: {
      schemas: {
        Error: { type: 'object', properties: { code: { type: 'integer' }, error: { type: 'string' } }, required: ['code', 'error'] },
      },
    },
  };
}

/** GET /openapi.json and GET /docs/api, without keys: the description holds nothing secret. */
export function registerOpenApiRoutes(app: FastifyInstance, options: { routes: RouteEntry[]; version: string }): void {
  let built: Json | null = null;
  let page: string | null = null;
  // Built at the first request: every route is registered by then.
  const document = () => (built ??= openApiDocument(options.routes, options.version));
  app.get('/openapi.json', async () => document());
  app.get('/docs/api', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('Content-Security-Policy', referencePagePolicy).send((page ??= referencePage(document()))),
  );
}
