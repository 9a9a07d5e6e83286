import type { FastifyInstance } from 'fastify';
import { catalogue, type ErrorKind } from '../../lib/errors.ts';
import type { SchemaError } from '../../lib/json-schema.ts';
import type { RouteEntry } from '../schema.ts';
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

function parameters(entry: RouteEntry): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [['path', entry.schema?.params], ['query', entry.schema?.querystring]] as const) {
    const props = (schema as { properties?: Record<string, unknown>; required?: string[] } | undefined) ?? {};
    for (const [name, property] of Object.entries(props.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (props.required ?? []).includes(name), schema: property });
    }
  }
  // A path parameter a route has not described yet is still a parameter.
  for (const match of entry.url.matchAll(/:(\w+)/g)) {
    if (!out.some((p) => p.in === 'path' && p.name === match[1])) out.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  return out;
}

function responses(entry: RouteEntry): Json {
  const named = errorsNamed(entry.schema ?? {});
  if (entry.url.startsWith('/1.1/')) {
    for (const kind of keyedErrors) named.push({ kind, message: catalogue[kind].message });
  }
  const out: Json = { '200': { description: 'Success.' } };
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

/** The OpenAPI 3.1 document of the routes as registered, schemas as they validate. */
export function openApiDocument(routes: RouteEntry[], version: string): Json {
  const paths: Record<string, Json> = {};
  for (const entry of routes) {
    const path = entry.url.replace(/:(\w+)/g, '{$1}');
    const operation: Json = { parameters: parameters(entry), responses: responses(entry) };
    if (entry.schema?.body) operation.requestBody = { required: false, content: { 'application/json': { schema: entry.schema.body } } };
    (paths[path] ??= {})[entry.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Roost', version, description: 'LeanCloud-compatible REST API. Errors answer {code, error}.' },
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
