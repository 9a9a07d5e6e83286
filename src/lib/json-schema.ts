import { Ajv, type ErrorObject, type SchemaObject } from 'ajv';
import { ApiError, type ErrorKind } from './errors.ts';

/**
 * JSON Schemas of the inputs the API and the CLI take (the routes declare theirs through
 * src/http/schema.ts), and the one mapping of a failure to the catalogue error the schema names.
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

/**
 * A message may name a parameter of the failure in braces: "Unknown option '{additionalProperty}'.",
 * or `{field}`, the name of the property that failed ("{field} must be a string.").
 */
function toApiError(annotation: SchemaError, failure: ErrorObject): ApiError {
  if (typeof annotation === 'string') return new ApiError(annotation);
  const params: Record<string, unknown> = { field: failure.instancePath.split('/').pop(), ...failure.params };
  const message = annotation.message?.replace(/\{(\w+)\}/g, (whole, name: string) => (typeof params[name] === 'string' ? (params[name] as string) : whole));
  return new ApiError(annotation.kind, message);
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
    if (missing?.['x-missing']) return toApiError(missing['x-missing'] as SchemaError, failure);
  }
  const nodes = nodesOnPath(root, failure.schemaPath);
  for (let i = nodes.length - 1; i >= 0; i--) {
    if (nodes[i]['x-error']) return toApiError(nodes[i]['x-error'] as SchemaError, failure);
  }
  return new ApiError('invalidJson', `${failure.instancePath || 'The body'} ${failure.message ?? 'is invalid'}.`);
}

/** Checks `value` against `schema` as the routes do, for inputs that come from elsewhere (the CLI). */
export function checkSchema<T>(schema: SchemaObject, value: unknown): asserts value is T {
  const validate = ajv.compile(schema);
  if (!validate(value)) throw errorOf(schema, validate.errors![0]);
}

export function compileSchema(schema: SchemaObject): (value: unknown) => ApiError | null {
  const validate = ajv.compile(schema);
  return (value) => (validate(value) ? null : errorOf(schema, validate.errors![0]));
}
