import type { SchemaObject } from 'ajv';

/**
 * The console's route schemas (src/http/schema.ts `declared`): a failure is an ApiError, which the
 * console's error handler answers as a page for a browser and as {code, error} otherwise
 * (src/http/routes/console.ts). A form posted by a page sends only strings, so a page's own form never
 * fails these; a script posting JSON to the same route is told which field is not text.
 */
export const text = { type: 'string', 'x-error': { kind: 'incorrectType', message: '{field} must be a string.' } } as const;

/**
 * A form's body: urlencoded (or multipart) fields, or the same fields as a JSON object; none at all is
 * an empty form. Every change carries its CSRF token as `_csrf` (or in X-CSRF-Token). Fields not named
 * are left to the route (the settings form's section, the data browser's `o_<objectId>` picks).
 */
export function formBody(names: readonly string[], rest: SchemaObject = {}): SchemaObject {
  return {
    type: ['object', 'null'],
    'x-error': 'invalidJson',
    properties: Object.fromEntries(['_csrf', ...names].map((name) => [name, text])),
    ...rest,
  };
}

/** A form whose other fields are text too (every field of the form is one). */
export function textForm(names: readonly string[]): SchemaObject {
  return formBody(names, { additionalProperties: text });
}

