import { Ajv, type ErrorObject, type SchemaObject } from 'ajv';
import type { FastifyInstance, FastifySchema, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { ApiError, type ErrorKind } from '../lib/errors.ts';

/**
 * Route schemas: each route declares its body, querystring and params as JSON Schema; Fastify
 * validates with the Ajv below, and a failure answers the catalogue error the schema names.
 *
 * A schema node names its error with `x-error` (a catalogue kind, or {kind, message}); a property's
 * `x-missing` names the error when a `required` property is absent. A failure with no annotation on
 * its node takes the nearest enclosing one (the route's own at the root), else 107 invalidJson.
 */
export type SchemaError = ErrorKind | { kind: ErrorKind; message?: string };

/**
 * No coercion, no defaults, no stripping: the handler sees the body exactly as sent (LeanCloud's
 * object bodies are open, and a silently changed value would change what is stored). allErrors off:
 * the first failure is the one answered, in the schema's order. verbose: errors carry their schema node.
 */
const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, verbose: true, strict: false });
ajv.addKeyword({ keyword: 'x-error', schemaType: ['string', 'object'] });
ajv.addKeyword({ keyword: 'x-missing', schemaType: ['string', 'object'] });

function toApiError(annotation: SchemaError): ApiError {
  return typeof annotation === 'string' ? new ApiError(annotation) : new ApiError(annotation.kind, annotation.message);
}

/** The schema node at a JSON pointer (`#/properties/a/type`), and every node on the way to it. */
function nodesOnPath(root: SchemaObject, schemaPath: string): SchemaObject[] {
  const nodes: SchemaObject[] = [root];
  let node: unknown = root;
  for (const raw of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    const step = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[step] : undefined;
    if (node !== null && typeof node === 'object' && !Array.isArray(node)) nodes.push(node as SchemaObject);
  }
  return nodes;
}

/** The catalogue error a validation failure answers (the one mapping of schema failures to the wire). */
export function errorOf(root: SchemaObject, failure: ErrorObject): ApiError {
  if (failure.keyword === 'required') {
    const missing = (failure.parentSchema as SchemaObject | undefined)?.properties?.[(failure.params as { missingProperty: string }).missingProperty];
    if (missing?.['x-missing']) return toApiError(missing['x-missing'] as SchemaError);
  }
  const nodes = nodesOnPath(root, failure.schemaPath);
  for (let i = nodes.length - 1; i >= 0; i--) {
    if (nodes[i]['x-error']) return toApiError(nodes[i]['x-error'] as SchemaError);
  }
  return new ApiError('invalidJson', `${failure.instancePath || 'The body'} ${failure.message ?? 'is invalid'}.`);
}

/** Fastify's validator compiler: Ajv as configured above, failures returned as the catalogue error. */
const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) => {
  const validate = ajv.compile(schema as SchemaObject);
  return (data: unknown) => (validate(data) ? { value: data } : { error: errorOf(schema as SchemaObject, validate.errors![0]) });
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
}

export function collectRoutes(app: FastifyInstance): RouteEntry[] {
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      // HEAD routes are Fastify's copies of GET ones; OPTIONS is the CORS preflight.
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      routes.push({ method, url: route.url, schema: route.schema });
    }
  });
  return routes;
}

/** Path parameters: strings, as Fastify's router hands them over. */
export function pathParams(...names: string[]): SchemaObject {
  return { type: 'object', properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])), required: names };
}
