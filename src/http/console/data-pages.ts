import type { FastifyReply } from 'fastify';
import type { AppRecord } from '../../objects/types.ts';
import type { ClassSize } from '../../storage/ops-store.ts';
import type { ImportProblem, FileReport } from '../../import/importer.ts';
import { banner, csrfField, document, h, send, type PageSession } from './pages.ts';
import { appNav, type AppTab } from './app-nav.ts';
import { cellText, columnsOf, filterOps, type BrowseInput } from './data-query.ts';

/** The pages of the data browser (src/http/routes/console-data.ts): classes, objects, one object, indexes, import. */

const enc = encodeURIComponent;

export function appBase(app: AppRecord): string {
  return `/console/apps/${enc(app.appId)}`;
}

export function classBase(app: AppRecord, className: string): string {
  return `${appBase(app)}/data/${enc(className)}`;
}

/** The heading of every page of one application: its name, and the application's tabs (app-nav.ts). */
export function appHeader(app: AppRecord, tab: AppTab): string {
  return `<p class="crumbs"><a href="/console/apps">Applications</a> › <a href="${appBase(app)}">${h(app.name)}</a></p>
${appNav(app.appId, tab)}`;
}

export function notice(kind: 'error' | 'success', message: string): string {
  return kind === 'error' ? `<p class="notice error" role="alert">${h(message)}</p>` : `<p class="notice success" role="status">${h(message)}</p>`;
}

export function appPage(reply: FastifyReply, session: PageSession, app: AppRecord, tab: AppTab, title: string, main: string, status = 200): FastifyReply {
  return send(reply, status, document(`${title} · ${app.name}`, banner(session, 'apps'), `${appHeader(app, tab)}${main}`));
}

const isAdmin = (session: PageSession) => session.operator.role === 'admin';

/** A class's size as the pages show it: exact, `≈` an estimate, or `more than` a bound. */
export function sizeText(size: ClassSize): string {
  const n = size.count.toLocaleString('en');
  if (size.kind === 'estimate') return `<abbr title="estimated from the database's statistics">≈ ${n}</abbr>`;
  if (size.kind === 'atLeast') return `more than ${n}`;
  return n;
}

export function classesPage(reply: FastifyReply, session: PageSession, app: AppRecord, classes: Array<{ name: string; count: number; countKind: ClassSize['kind'] }>): FastifyReply {
  const rows = classes
    .map((c) => `<tr><td data-label="Class"><a href="${classBase(app, c.name)}">${h(c.name)}</a></td>` +
      `<td data-label="Objects" class="count">${sizeText({ count: c.count, kind: c.countKind })}</td></tr>`)
    .join('\n');
  const create = isAdmin(session)
    ? `<div class="card"><h2>New class</h2><p class="muted">A class exists once it holds an object: name it and create its first object.</p>
<form method="get" action="${appBase(app)}/data/new" class="inline"><div><label for="class-name">Class name</label>
<input id="class-name" name="className" required pattern="[A-Za-z][A-Za-z0-9_]*" maxlength="100"></div><button type="submit">Next</button></form></div>`
    : '';
  const main = `<div class="card"><h1>Classes</h1>
<table><thead><tr><th scope="col">Class</th><th scope="col" class="count">Objects</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>${create}`;
  return appPage(reply, session, app, 'data', 'Classes', main);
}

function option(value: string, text: string, selected: string): string {
  return `<option value="${h(value)}"${value === selected ? ' selected' : ''}>${h(text)}</option>`;
}

function browseLink(app: AppRecord, className: string, input: BrowseInput, after: string | null): string {
  const params = new URLSearchParams();
  for (const key of ['field', 'op', 'value', 'where', 'sort', 'dir'] as const) if (input[key]) params.set(key, input[key]);
  params.set('limit', String(input.limit));
  if (after) params.set('after', after);
  return `${classBase(app, className)}?${params}`;
}

export interface ObjectsView {
  className: string;
  input: BrowseInput;
  rows: Record<string, unknown>[];
  /** Null: a filter on a large class, not counted unless asked. */
  total: ClassSize | null;
  next: string | null;
  error?: string;
  message?: string;
}

export function objectsPage(reply: FastifyReply, session: PageSession, app: AppRecord, view: ObjectsView, status = 200): FastifyReply {
  const { className, input, rows } = view;
  const base = classBase(app, className);
  const admin = isAdmin(session);
  const { columns, more } = columnsOf(rows);
  const sortable = ['createdAt', 'updatedAt', 'objectId', ...columns.filter((c) => !['createdAt', 'updatedAt', 'objectId'].includes(c))];
  if (!sortable.includes(input.sort)) sortable.push(input.sort);
  const filter = `<form method="get" action="${base}" aria-label="Filter and sort">
<div class="inline">
<div><label for="field">Field</label><input id="field" name="field" value="${h(input.field)}" placeholder="score" list="fields"></div>
<div class="narrow"><label for="op">Operator</label><select id="op" name="op">${Object.entries(filterOps).map(([v, t]) => option(v, t, input.op)).join('')}</select></div>
<div><label for="value">Value</label><input id="value" name="value" value="${h(input.value)}" placeholder='10, "text", true'></div>
</div>
<datalist id="fields">${['objectId', 'createdAt', 'updatedAt', ...columns].map((c) => `<option value="${h(c)}">`).join('')}</datalist>
<details${input.where ? ' open' : ''}><summary>Raw where (JSON)</summary>
<label for="where">where</label><textarea id="where" name="where" rows="3" placeholder='{"score": {"$gte": 10}}'>${h(input.where)}</textarea></details>
<div class="inline">
<div class="narrow"><label for="sort">Sort by</label><select id="sort" name="sort">${sortable.map((c) => option(c, c, input.sort)).join('')}</select></div>
<div class="narrow"><label for="dir">Order</label><select id="dir" name="dir">${option('desc', 'descending', input.dir)}${option('asc', 'ascending', input.dir)}</select></div>
<div class="narrow"><label for="limit">Per page</label><select id="limit" name="limit">${[20, 50, 100, 200].map((n) => option(String(n), String(n), String(input.limit))).join('')}</select></div>
<button type="submit">Apply</button>
</div></form>`;
  const head = `<tr>${admin ? '<th scope="col"><span class="skip">Select</span></th>' : ''}<th scope="col">objectId</th>${columns.map((c) => `<th scope="col">${h(c)}</th>`).join('')}<th scope="col">updatedAt</th></tr>`;
  const body = rows
    .map((row) => {
      const id = String(row.objectId);
      const pick = admin ? `<td data-label="Select"><input type="checkbox" name="o_${h(id)}" value="1" aria-label="Select ${h(id)}" form="selected"></td>` : '';
      return `<tr>${pick}<td data-label="objectId"><a href="${base}/${enc(id)}"><code>${h(id)}</code></a></td>` +
        columns.map((c) => `<td data-label="${h(c)}">${h(cellText(row[c]))}</td>`).join('') +
        `<td data-label="updatedAt">${h(cellText(row.updatedAt))}</td></tr>`;
    })
    .join('\n');
  const filtered = Boolean(input.field || input.where);
  const counted = view.total === null
    ? (filtered && !view.error ? `<a href="${browseLink(app, className, input, input.after || null)}&amp;count=1">Count the matches</a> (may read the whole class). ` : '')
    : `${sizeText(view.total)} object${view.total.count === 1 && view.total.kind === 'exact' ? '' : 's'}${filtered ? ' match' : ''}. `;
  const sortNote = ['createdAt', 'updatedAt', 'objectId'].includes(input.sort) ? '' : `Sorted by ${input.sort}: objects without it are not listed. `;
  const table = rows.length
    ? `<div class="scroll"><table><thead>${head}</thead><tbody>
${body}
</tbody></table></div>${more ? `<p class="muted">${more} more field${more === 1 ? '' : 's'}: open an object to see them all.</p>` : ''}`
    : '<p>No objects.</p>';
  const pager = `<nav class="pager" aria-label="Pages">${input.after ? `<a href="${browseLink(app, className, input, null)}">First page</a>` : '<span></span>'}` +
    `${view.next ? `<a href="${browseLink(app, className, input, view.next)}" rel="next">Next page</a>` : ''}</nav>`;
  const actions = `<div class="actions">
${admin ? `<a class="button" href="${base}/new">New object</a>` : ''}
<a class="button" href="${base}/export" download>Export JSON lines</a>
<a class="button" href="${base}/indexes">Indexes</a>
${admin && rows.length ? `<form id="selected" method="post" action="${base}/delete">${csrfField(session)}<button type="submit" class="destructive">Delete selected…</button></form>` : ''}
</div>`;
  const importForm = admin
    ? `<div class="card"><h2>Import</h2><p class="muted">A file in the format of <code>roost import</code>: one JSON object a line (.jsonl, .json, .ndjson, optionally .gz). Objects whose objectId is already there are skipped.</p>
<form method="post" action="${base}/import" enctype="multipart/form-data" class="inline">${csrfField(session)}
<div><label for="file">Export file</label><input id="file" name="file" type="file" required accept=".jsonl,.json,.ndjson,.gz"></div>
<button type="submit">Import</button></form></div>`
    : '';
  const main = `<div class="card"><h1>${h(className)}</h1>
${view.error ? notice('error', view.error) : ''}${view.message ? notice('success', view.message) : ''}${filter}</div>
<div class="card">${actions}<p class="muted">${counted}${sortNote}</p>
${table}
${pager}</div>
${importForm}`;
  return appPage(reply, session, app, 'data', className, main, status);
}

/** Fields as the edit form shows them: everything but the server's fields and the ACL, pretty-printed. */
export function editableFields(object: Record<string, unknown>): Record<string, unknown> {
  const { objectId: _id, createdAt: _c, updatedAt: _u, ACL: _acl, ...fields } = object;
  return fields;
}

export function objectPage(
  reply: FastifyReply,
  session: PageSession,
  app: AppRecord,
  className: string,
  object: Record<string, unknown>,
  options: { error?: string; message?: string; fields?: string; acl?: string } = {},
  status = 200,
): FastifyReply {
  const base = classBase(app, className);
  const id = String(object.objectId);
  const edit = isAdmin(session)
    ? `<div class="card"><h2>Edit</h2>
<form method="post" action="${base}/${enc(id)}">${csrfField(session)}
<label for="fields">Fields (JSON)</label>
<textarea id="fields" name="fields" rows="14" spellcheck="false">${h(options.fields ?? JSON.stringify(editableFields(object), null, 2))}</textarea>
<p class="muted">A field left out is deleted; relation fields are kept as they are.</p>
<label for="acl">ACL (JSON)</label>
<textarea id="acl" name="acl" rows="5" spellcheck="false">${h(options.acl ?? JSON.stringify(object.ACL ?? {}, null, 2))}</textarea>
<button type="submit">Save</button></form></div>
<div class="card"><h2>Delete</h2><form method="post" action="${base}/delete">${csrfField(session)}<input type="hidden" name="o_${h(id)}" value="1">
<button type="submit" class="destructive">Delete this object…</button></form></div>`
    : '';
  const main = `<div class="card"><p class="crumbs"><a href="${base}">${h(className)}</a></p><h1><code>${h(id)}</code></h1>
${options.error ? notice('error', options.error) : ''}${options.message ? notice('success', options.message) : ''}
<pre>${h(JSON.stringify(object, null, 2))}</pre></div>${edit}`;
  return appPage(reply, session, app, 'data', `${className} ${id}`, main, status);
}

export function newObjectPage(reply: FastifyReply, session: PageSession, app: AppRecord, className: string, options: { error?: string; fields?: string; acl?: string } = {}, status = 200): FastifyReply {
  const base = classBase(app, className);
  const main = `<div class="card"><p class="crumbs"><a href="${base}">${h(className)}</a></p><h1>New ${h(className)} object</h1>
${options.error ? notice('error', options.error) : ''}
<form method="post" action="${base}/new">${csrfField(session)}
<label for="fields">Fields (JSON)</label>
<textarea id="fields" name="fields" rows="10" spellcheck="false" required>${h(options.fields ?? '{\n  \n}')}</textarea>
<label for="acl">ACL (JSON; empty for the class default)</label>
<textarea id="acl" name="acl" rows="4" spellcheck="false" placeholder='{"*": {"read": true}}'>${h(options.acl ?? '')}</textarea>
<button type="submit">Create</button></form></div>`;
  return appPage(reply, session, app, 'data', `New ${className}`, main, status);
}

export function confirmDeletePage(reply: FastifyReply, session: PageSession, app: AppRecord, className: string, ids: string[]): FastifyReply {
  const base = classBase(app, className);
  const main = `<div class="card"><h1>Delete ${ids.length} object${ids.length === 1 ? '' : 's'} of ${h(className)}?</h1>
<p>This cannot be undone.</p>
<ul>${ids.map((id) => `<li><code>${h(id)}</code></li>`).join('')}</ul>
<form method="post" action="${base}/delete" class="actions">${csrfField(session)}<input type="hidden" name="confirm" value="yes">
${ids.map((id) => `<input type="hidden" name="o_${h(id)}" value="1">`).join('')}
<button type="submit" class="destructive">Delete</button><a href="${base}">Cancel</a></form></div>`;
  return appPage(reply, session, app, 'data', `Delete from ${className}`, main);
}

export interface ShownIndexRow {
  name: string;
  keys: Record<string, number>;
  unique: boolean;
  state: string;
  error?: string;
}

export function indexesPage(
  reply: FastifyReply,
  session: PageSession,
  app: AppRecord,
  className: string,
  indexes: ShownIndexRow[],
  options: { error?: string; message?: string; name?: string; keys?: string } = {},
  status = 200,
): FastifyReply {
  const base = classBase(app, className);
  const admin = isAdmin(session);
  const rows = indexes
    .map((index) => `<tr><td data-label="Name"><code>${h(index.name)}</code></td><td data-label="Keys"><code>${h(JSON.stringify(index.keys))}</code></td>` +
      `<td data-label="Unique">${index.unique ? 'yes' : 'no'}</td><td data-label="State">${h(index.state)}${index.error ? `: ${h(index.error)}` : ''}</td>` +
      (admin ? `<td data-label="Drop"><form method="post" action="${base}/indexes/${enc(index.name)}/drop">${csrfField(session)}<button type="submit" class="secondary" aria-label="Drop ${h(index.name)}">Drop…</button></form></td>` : '') +
      '</tr>')
    .join('\n');
  const table = indexes.length
    ? `<table><thead><tr><th scope="col">Name</th><th scope="col">Keys</th><th scope="col">Unique</th><th scope="col">State</th>${admin ? '<th scope="col"><span class="skip">Drop</span></th>' : ''}</tr></thead><tbody>
${rows}
</tbody></table>`
    : '<p>No index declared on this class (objectId, createdAt, updatedAt and the unique user fields are always indexed).</p>';
  const create = admin
    ? `<div class="card"><h2>New index</h2>
<form method="post" action="${base}/indexes">${csrfField(session)}
<div class="grid2"><div><label for="index-name">Name</label><input id="index-name" name="name" required value="${h(options.name ?? '')}" placeholder="by_score"></div>
<div><label for="index-keys">Keys (JSON)</label><input id="index-keys" name="keys" required value="${h(options.keys ?? '')}" placeholder='{"score": -1}'></div></div>
<label class="check"><input type="checkbox" name="unique" value="true"> Unique</label>
<button type="submit">Create index</button></form></div>`
    : '';
  const main = `<div class="card"><p class="crumbs"><a href="${base}">${h(className)}</a></p><h1>Indexes of ${h(className)}</h1>
${options.error ? notice('error', options.error) : ''}${options.message ? notice('success', options.message) : ''}${table}</div>${create}`;
  return appPage(reply, session, app, 'data', `Indexes of ${className}`, main, status);
}

export function confirmDropPage(reply: FastifyReply, session: PageSession, app: AppRecord, className: string, name: string): FastifyReply {
  const base = classBase(app, className);
  const main = `<div class="card"><h1>Drop the index ${h(name)} of ${h(className)}?</h1>
<p>Queries that used it will scan the class.</p>
<form method="post" action="${base}/indexes/${enc(name)}/drop" class="actions">${csrfField(session)}<input type="hidden" name="confirm" value="yes">
<button type="submit" class="destructive">Drop</button><a href="${base}/indexes">Cancel</a></form></div>`;
  return appPage(reply, session, app, 'data', `Drop index ${name}`, main);
}

export function importResultPage(reply: FastifyReply, session: PageSession, app: AppRecord, className: string, report: FileReport, problems: ImportProblem[]): FastifyReply {
  const base = classBase(app, className);
  const shown = problems.slice(0, 50);
  const main = `<div class="card"><p class="crumbs"><a href="${base}">${h(className)}</a></p><h1>Import into ${h(className)}</h1>
${notice(report.bad + report.conflicts > 0 ? 'error' : 'success', `${report.inserted} imported, ${report.existing} already there, ${report.conflicts} conflicts, ${report.bad} bad lines (of ${report.lines}).`)}
${shown.length ? `<table><thead><tr><th scope="col">Line</th><th scope="col">Kind</th><th scope="col">Problem</th></tr></thead><tbody>
${shown.map((p) => `<tr><td data-label="Line">${p.line}</td><td data-label="Kind">${h(p.kind)}</td><td data-label="Problem">${h(p.message)}</td></tr>`).join('\n')}
</tbody></table>${problems.length > shown.length ? `<p class="muted">and ${problems.length - shown.length} more.</p>` : ''}` : ''}
<p><a href="${base}">Back to ${h(className)}</a></p></div>`;
  return appPage(reply, session, app, 'data', `Import into ${className}`, main);
}
