// docs/grafana-dashboard.json queries only metrics Roost exports: a renamed metric breaks this test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer | undefined;
after(async () => {
  await server?.close();
});

interface Panel {
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}

/** Metric names a PromQL expression reads: identifiers not followed by `(`, outside strings, label braces and by-clauses. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)].map((m) => m[1]);
}

test('every PromQL expression of the dashboard reads metrics /metrics exports', async () => {
  const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as {
    panels: Panel[];
    templating: { list: Array<{ query?: string }> };
  };
  server = await startServer();
  await server.client.get('/1.1/date');
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const exported = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)/gm)].flatMap(([, name, type]) =>
    type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
  ));
  const exprs = dashboard.panels.flatMap(function walk(panel: Panel): string[] {
    return [...(panel.targets ?? []).map((t) => t.expr), ...(panel.panels ?? []).flatMap(walk)];
  });
  assert.ok(exprs.length >= 8);
  const read = exprs.flatMap(metricNames);
  assert.ok(read.includes('roost_http_requests_total'));
  for (const name of read) assert.ok(exported.has(name), `the dashboard reads ${name}, which /metrics does not export`);
});
