import { escapeHtml as h, htmlHead, styleOnlyPolicy } from '../mail-pages.ts';

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: unknown;
}
interface Operation {
  tags?: string[];
  parameters: Parameter[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: { 'application/json'?: { examples: Record<string, { value: { code: number; error: string } }> } } }>;
}

const css = `body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}
h2{font-size:1.05em;margin:1.8em 0 .4em;border-top:1px solid #ddd;padding-top:.8em}code{background:#f3f3f3;padding:0 .2em}
pre{background:#f7f7f7;padding:.5em;overflow:auto;font-size:12px}table{border-collapse:collapse}td,th{text-align:left;padding:.1em .8em .1em 0;vertical-align:top}
.m{font-weight:bold;text-transform:uppercase}ul.index{columns:2;font-size:13px}`;
/** Only the page's own style sheet may apply: nothing runs, nothing loads from elsewhere. */
export const referencePagePolicy = styleOnlyPolicy(css);

/** A parameter's schema in a few words: its type(s), else the schema itself. */
function summary(schema: unknown): string {
  const node = (schema ?? {}) as Json;
  if (typeof node.type === 'string') return node.type;
  if (Array.isArray(node.anyOf)) return node.anyOf.map(summary).join(' or ');
  return JSON.stringify(schema);
}

function operationHtml(method: string, path: string, operation: Operation): string {
  const id = `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');
  const out = [`<h2 id="${h(id)}"><span class="m">${h(method)}</span> <code>${h(path)}</code></h2>`];
  if (operation.parameters.length > 0) {
    const rows = operation.parameters.map(
      (p) => `<tr><td><code>${h(p.name)}</code></td><td>${h(p.in)}</td><td>${p.required ? 'required' : 'optional'}</td><td>${h(summary(p.schema))}</td></tr>`,
    );
    out.push(`<table><tr><th>Parameter</th><th>In</th><th></th><th>Type</th></tr>${rows.join('')}</table>`);
  }
  if (operation.tags?.includes('console')) out.push('<p>Console route (see "console" above).</p>');
  for (const [media, { schema }] of Object.entries(operation.requestBody?.content ?? {})) {
    out.push(`<p>Body, <code>${h(media)}</code> (JSON Schema):</p><pre>${h(JSON.stringify(schema, null, 1))}</pre>`);
  }
  const errors: string[] = [];
  for (const [status, response] of Object.entries(operation.responses)) {
    for (const { value } of Object.values(response.content?.['application/json']?.examples ?? {})) {
      errors.push(`<li>${h(status)} <code>{"code": ${value.code}, "error": ${h(JSON.stringify(value.error))}}</code></li>`);
    }
  }
  if (errors.length > 0) out.push(`<p>Errors:</p><ul>${errors.join('')}</ul>`);
  return out.join('\n');
}

/** The API reference as one HTML page, rendered from the OpenAPI document (GET /docs/api). */
export function referencePage(document: Json): string {
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const operations = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));
  const index = operations.map(({ path, method }) => `<li><a href="#${h(`${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-'))}">${h(method.toUpperCase())} ${h(path)}</a></li>`);
  const info = document.info as { title: string; version: string; description: string };
  return `${htmlHead(`${info.title} API`, css)}
<body>
<h1>${h(info.title)} API ${h(info.version)}</h1>
<p>${h(info.description)} Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
${((document.tags ?? []) as Array<{ name: string; description: string }>).map((tag) => `<p><b>${h(tag.name)}</b>: ${h(tag.description)}</p>`).join('\n')}
<ul class="index">${index.join('')}</ul>
${operations.map(({ path, method, operation }) => operationHtml(method, path, operation)).join('\n')}
</body>
</html>
`;
}
