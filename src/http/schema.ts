import type { SchemaObject } from 'ajv';
import type { FastifyInstance, FastifySchema, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { compileSchema } from '../lib/json-schema.ts';

/**
 * Route schemas. Fastify's validator compiler: the shared Ajv of src/lib/json-schema.ts (its options,
 * `x-error` / `x-missing`, the mapping of a failure to the catalogue), failures returned as that error.
 */
const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) => {
  // Compiled on the route's first request, not at registration: Ajv compiles a schema to code, and the
  // ~300 schemas of a server cost ~300 ms of CPU at every start (each node, each test's server), most of
  // them for routes a node may never serve. test/openapi.test.ts compiles every route's schemas.
  let check: ReturnType<typeof compileSchema> | undefined;
  return (data: unknown) => {
    check ??= compileSchema(schema as SchemaObject);
    const error = check(data);
    return error ? { error } : { value: data };
  };
};

/** The server's default, so that no route is ever validated by Fastify's own (coercing, stripping) Ajv. */
export function installSchemaValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
}

/**
 * A route's options for its schema: the schema and this compiler together, so the route validates the
 * same way in any Fastify instance (a test may register one route group on a bare one).
 */
export function declared(schema: FastifySchema): { schema: FastifySchema; validatorCompiler: typeof validatorCompiler } {
  return { schema, validatorCompiler };
}

/** Every route as registered, for the API description (src/http/routes/openapi.ts). */
export interface RouteEntry {
  method: string;
  url: string;
  schema: FastifySchema | undefined;
  /** A console route's access as declared (src/http/console/routing.ts; none is `admin`). */
  access?: 'public' | 'operator' | 'admin';
}

export function collectRoutes(app: FastifyInstance): RouteEntry[] {
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      // HEAD routes are Fastify's copies of GET ones; OPTIONS is the CORS preflight.
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      routes.push({ method, url: route.url, schema: route.schema, access: route.config?.console });
    }
  });
  return routes;
}

/** A body that must be a JSON object (107 otherwise), its fields the domain's to check. */
export const objectBody = { type: 'object', 'x-error': 'invalidJson' } as const;

/** A write's body: a JSON object, or none at all (an empty update); 107 otherwise. */
export const writeBody = { type: ['object', 'null'], 'x-error': 'invalidJson' } as const;

/**
 * A query parameter: a string, or strings when repeated (routes read the last one, src/http/params.ts).
 * Fastify's query parser yields nothing else, so this declares rather than refuses: what a value means
 * (a where's JSON, a limit's number) is the domain's to check, with its own messages.
 */
const queryParam = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };

export function queryParams(...names: string[]): SchemaObject {
  return { type: 'object', properties: Object.fromEntries(names.map((name) => [name, queryParam])) };
}

/** Path parameters: strings, as Fastify's router hands them over. */
export function pathParams(...names: string[]): SchemaObject {
  return { type: 'object', properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])), required: names };
}
