import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Importer, importableClass, type ImportProblem } from '../../import/importer.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AppRecord } from '../../objects/types.ts';
import type { Store } from '../../storage/store.ts';
import type { ClassSize } from '../../storage/ops-store.ts';
import { BrowseError, browseInput, nextCursor, pageQuery, readOnlyValue, type BrowseInput } from '../console/data-query.ts';
import {
  classBase,
  classesPage,
  confirmDeletePage,
  confirmDropPage,
  editableFields,
  importResultPage,
  indexesPage,
  newObjectPage,
  objectPage,
  objectsPage,
} from '../console/data-pages.ts';
import { MasterRest, RestError, formJsonObject } from '../console/master-rest.ts';
import { consoleHeaders, messagePage } from '../console/pages.ts';
import { field, session, wantsHtml } from '../console/routing.ts';
import { formBody, text } from '../console/input.ts';
import { declared, pathParams, queryParams } from '../schema.ts';
import type { ConsoleKit } from '../console/master-rest.ts';

interface AppParams {
  appId: string;
}
interface ClassParams extends AppParams {
  className: string;
}
interface ObjectParams extends ClassParams {
  objectId: string;
}

/**
 * Above this many objects a class's count is the database's estimate (or "more than"), labelled so: a
 * bounded count reads at most this many index entries (~12 ms on PostgreSQL), where count(*) of a
 * million-object class took 140-220 ms on every page load (docs/console.md).
 */
export const exactCountUpTo = 10_000;

/** Largest file the import form takes; `roost import` on the server has no limit. */
export const importLimitBytes = 64 * 1024 * 1024;
const exportPage = 1000;
/** Reads show the ACL, which the edit form and an export's lines carry. */
const withAcl = { query: { returnACL: 'true' } };
const classPattern = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Selected objects arrive as fields o_<objectId> (a form's repeated names would collapse into one). */
function pickedIds(body: unknown): string[] {
  return Object.keys((body ?? {}) as Record<string, unknown>)
    .filter((key) => key.startsWith('o_'))
    .map((key) => key.slice(2))
    .filter((id) => /^[A-Za-z0-9_-]{1,64}$/.test(id))
    .slice(0, 1000);
}

/** The count of a filter on a large class is made only when the page asks for it (`count=1`). */
function countAsked(request: FastifyRequest): boolean {
  return (request.query as Record<string, unknown> | undefined)?.count === '1';
}

const appParams = pathParams('appId');
const classParams = pathParams('appId', 'className');
const objectParams = pathParams('appId', 'className', 'objectId');
/** The objects page's filter, sort and page (src/http/console/data-query.ts reads them), and `count=1`. */
const browseQuery = queryParams('field', 'op', 'value', 'where', 'sort', 'dir', 'after', 'limit', 'count');
/** An object's fields and ACL, each JSON typed into a textarea. */
const objectForm = formBody(['fields', 'acl']);
/** The delete form: its picks (o_<objectId>) and the confirmation. */
const pickForm = formBody(['confirm'], { patternProperties: { '^o_': text } });
/** The import form (multipart/form-data): `file`, the export file to import (the route checks it is one). */
const importForm = formBody([]);
importForm.properties.file = { description: 'A file part of multipart/form-data: JSON lines, gzipped or not.' };
importForm['x-media'] = 'multipart/form-data';

/** A JSON object typed into a textarea, or `empty` when left blank. */
function jsonObject(raw: string, what: string, empty: Record<string, unknown> | null): Record<string, unknown> | null {
  return raw.trim() === '' ? empty : formJsonObject(raw, what, what === 'fields');
}

/**
 * The data browser (docs/console.md): classes with counts, a class's objects (filter, sort, keyset
 * pages), one object (read, edit fields and ACL, delete), create, delete selected, export and import
 * JSON lines, and the class's indexes. Reads are open to any operator, changes to admins; every
 * change goes through the REST API with the application's master key (MasterRest) and is audited.
 */
export async function registerConsoleData(scope: FastifyInstance, kit: ConsoleKit & { store: Store; clock: Clock; secret: string }): Promise<void> {
  const { operators, registry } = kit;
  const operatorOnly = { config: { console: 'operator' as const } };

  // The import form posts multipart/form-data; Node's own parser (undici's FormData) reads it.
  scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: importLimitBytes }, (request, body, done) => {
    new Response(new Uint8Array(body as Buffer), { headers: { 'content-type': request.headers['content-type'] ?? '' } })
      .formData()
      .then((form) => {
        const parsed: Record<string, unknown> = {};
        for (const [key, value] of form.entries()) parsed[key] = value;
        done(null, parsed);
      })
      .catch(() => done(null, {}));
  });

  const appOf = async (request: FastifyRequest<{ Params: AppParams }>): Promise<AppRecord | null> => registry.get(request.params.appId);
  const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) => {
    const error = new RestError(404, 101, what);
    if (!wantsHtml(request)) return consoleHeaders(reply).status(404).send(error.toBody());
    return messagePage(reply, 404, 'Not found', what);
  };
  const audit = (request: FastifyRequest, action: string, target: string, detail: Record<string, unknown>) =>
    operators.record(session(request).operator.name, action, target, detail);

  /** Runs a handler for an existing application and class name; a RestError becomes a page or {code, error}. */
  const withClass = <P extends ClassParams>(
    handler: (request: FastifyRequest<{ Params: P }>, reply: FastifyReply, app: AppRecord, rest: MasterRest) => Promise<unknown>,
    onError?: (request: FastifyRequest<{ Params: P }>, reply: FastifyReply, app: AppRecord, error: RestError) => Promise<unknown> | unknown,
  ) => async (request: FastifyRequest<{ Params: P }>, reply: FastifyReply) => {
    const app = await appOf(request);
    if (!app) return notFound(request, reply, 'No application with that id.');
    if (!classPattern.test((request.params as ClassParams).className)) return notFound(request, reply, 'No class of that name.');
    try {
      return await handler(request, reply, app, new MasterRest(kit.root, app));
    } catch (error) {
      if (!(error instanceof RestError)) throw error;
      if (onError && wantsHtml(request)) return onError(request, reply, app, error);
      if (!wantsHtml(request)) return consoleHeaders(reply).status(error.status).send(error.toBody());
      return messagePage(reply, error.status, 'Not done', error.message);
    }
  };

  // Every object of the class, as the master key counts them: exact up to exactCountUpTo, then estimated.
  const classSize = (app: AppRecord, className: string) => kit.store.ops.classSize(app.appId, className, exactCountUpTo);
  const classCounts = async (app: AppRecord, rest: MasterRest) => {
    const schemas = (await rest.ok('GET', '/schemas')) as Record<string, unknown>;
    const names = Object.keys(schemas).filter((name) => classPattern.test(name));
    return Promise.all(names.map(async (name) => {
      const { count, kind } = await classSize(app, name);
      return { name, count, countKind: kind };
    }));
  };

  /**
   * One page of objects; a bad filter is a BrowseError or the API's own refusal, both shown above the table.
   * The count: the class's size without a filter; with one, counted by the API on a class of at most
   * exactCountUpTo objects, and on a larger one only when asked (`count=1`), as it may read every object.
   */
  const browse = async (app: AppRecord, rest: MasterRest, className: string, input: BrowseInput, countAsked: boolean) => {
    const path = `/classes/${encodeURIComponent(className)}`;
    let query: Record<string, string>;
    try {
      query = pageQuery(input);
    } catch (error) {
      if (error instanceof BrowseError) throw new RestError(400, 102, error.message);
      throw error;
    }
    const page = await rest.ok('GET', path, { query: { ...query, returnACL: 'true' } });
    const rows = page.results as Record<string, unknown>[];
    const size = await classSize(app, className);
    let total: ClassSize | null = size;
    if (input.field || input.where) {
      total = null;
      if (size.kind === 'exact' || countAsked) {
        const where = pageQuery({ ...input, after: '' }).where;
        const counted = await rest.call('GET', path, { query: { where, count: '1', limit: '0' } });
        if (counted.status === 200) total = { count: Number(counted.body.count), kind: 'exact' };
      }
    }
    let next: string | null = null;
    try {
      next = nextCursor(input, rows);
    } catch (error) {
      if (error instanceof BrowseError) throw new RestError(400, 102, error.message);
      throw error;
    }
    return { rows, next, total };
  };

  const objectPath = (className: string, objectId: string) => `/classes/${encodeURIComponent(className)}/${encodeURIComponent(objectId)}`;

  /** The PUT body of an edit: the fields typed, a Delete for each field left out, and the ACL. */
  const editBody = (current: Record<string, unknown>, fields: Record<string, unknown>, acl: Record<string, unknown> | null) => {
    const body: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) if (!readOnlyValue(value)) body[key] = value;
    for (const [key, value] of Object.entries(editableFields(current))) {
      if (!(key in fields) && !readOnlyValue(value)) body[key] = { __op: 'Delete' };
    }
    if (acl) body.ACL = acl;
    return body;
  };

  // Pages.
  scope.get<{ Params: AppParams }>('/console/apps/:appId/data', { ...operatorOnly, ...declared({ params: appParams }) }, async (request, reply) => {
    const app = await appOf(request);
    if (!app) return notFound(request, reply, 'No application with that id.');
    return classesPage(reply, session(request), app, await classCounts(app, new MasterRest(kit.root, app)));
  });
  scope.get<{ Params: AppParams; Querystring: { className?: string } }>('/console/apps/:appId/data/new', { ...operatorOnly, ...declared({ params: appParams, querystring: queryParams('className') }) }, async (request, reply) => {
    const className = String(request.query.className ?? '');
    const app = await appOf(request);
    if (!app) return notFound(request, reply, 'No application with that id.');
    if (!classPattern.test(className)) return messagePage(reply, 400, 'Not a class name', 'A class name starts with a letter and holds letters, digits and _.');
    return consoleHeaders(reply).redirect(`${classBase(app, className)}/new`, 303);
  });

  scope.get<{ Params: ClassParams }>('/console/apps/:appId/data/:className', { ...operatorOnly, ...declared({ params: classParams, querystring: browseQuery }) }, withClass(
    async (request, reply, app, rest) => {
      const input = browseInput(request.query as Record<string, unknown>);
      const found = await browse(app, rest, request.params.className, input, countAsked(request));
      return objectsPage(reply, session(request), app, { className: request.params.className, input, ...found });
    },
    (request, reply, app, error) => {
      const input = browseInput(request.query as Record<string, unknown>);
      return objectsPage(reply, session(request), app, { className: request.params.className, input, rows: [], total: null, next: null, error: error.message }, error.status);
    },
  ));

  scope.get<{ Params: ClassParams }>('/console/apps/:appId/data/:className/new', { ...operatorOnly, ...declared({ params: classParams }) }, withClass(async (request, reply, app) =>
    newObjectPage(reply, session(request), app, request.params.className)));
  scope.post<{ Params: ClassParams }>('/console/apps/:appId/data/:className/new', declared({ params: classParams, body: objectForm }), withClass(
    async (request, reply, app, rest) => {
      const { className } = request.params;
      const fields = jsonObject(field(request.body, 'fields'), 'fields', {})!;
      const acl = jsonObject(field(request.body, 'acl'), 'ACL', null);
      const created = await rest.ok('POST', `/classes/${encodeURIComponent(className)}`, { body: acl ? { ...fields, ACL: acl } : fields });
      await audit(request, 'object.create', `${app.appId}/${className}/${created.objectId}`, { fields: Object.keys(fields) });
      return consoleHeaders(reply).redirect(`${classBase(app, className)}/${encodeURIComponent(created.objectId)}`, 303);
    },
    (request, reply, app, error) =>
      newObjectPage(reply, session(request), app, request.params.className, { error: error.message, fields: field(request.body, 'fields'), acl: field(request.body, 'acl') }, error.status),
  ));

  scope.post<{ Params: ClassParams }>('/console/apps/:appId/data/:className/delete', declared({ params: classParams, body: pickForm }), withClass(async (request, reply, app, rest) => {
    const { className } = request.params;
    const ids = pickedIds(request.body);
    if (ids.length === 0) throw new RestError(400, 104, 'Select the objects to delete first.');
    if (field(request.body, 'confirm') !== 'yes') return confirmDeletePage(reply, session(request), app, className, ids);
    for (const id of ids) await rest.ok('DELETE', objectPath(className, id));
    await audit(request, 'object.delete', `${app.appId}/${className}`, { objectIds: ids });
    return consoleHeaders(reply).redirect(classBase(app, className), 303);
  }));

  scope.get<{ Params: ClassParams }>('/console/apps/:appId/data/:className/export', { ...operatorOnly, ...declared({ params: classParams }) }, withClass(async (request, reply, app, rest) => {
    const { className } = request.params;
    const path = `/classes/${encodeURIComponent(className)}`;
    // Keyset pages on objectId, written as they are read: memory stays flat on any class size.
    async function* lines() {
      let after: string | null = null;
      for (;;) {
        const where = after === null ? {} : { objectId: { $gt: after } };
        const page = await rest.ok('GET', path, { query: { where: JSON.stringify(where), order: 'objectId', limit: String(exportPage), returnACL: 'true' } });
        const rows = page.results as Array<Record<string, unknown>>;
        if (rows.length > 0) yield rows.map((row) => `${JSON.stringify(row)}\n`).join('');
        if (rows.length < exportPage) return;
        after = String(rows[rows.length - 1].objectId);
      }
    }
    await audit(request, 'class.export', `${app.appId}/${className}`, {});
    return consoleHeaders(reply)
      .type('application/x-ndjson; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="${className}.jsonl"`)
      .send(Readable.from(lines()));
  }));

  scope.post<{ Params: ClassParams }>('/console/apps/:appId/data/:className/import', declared({ params: classParams, body: importForm }), withClass(async (request, reply, app) => {
    const { className } = request.params;
    if (!importableClass(className)) throw new RestError(400, 103, `Class ${className} is not imported (only _User, _Installation, _Role and your own classes).`);
    const file = (request.body as Record<string, unknown> | undefined)?.file;
    if (!(file instanceof Blob) || file.size === 0) throw new RestError(400, 113, 'Choose a non-empty export file to import.');
    const name = (file as File).name ?? '';
    const dir = await mkdtemp(join(tmpdir(), 'roost-console-import-'));
    try {
      const path = join(dir, `${className}${name.endsWith('.gz') ? '.jsonl.gz' : '.jsonl'}`);
      await writeFile(path, Buffer.from(await file.arrayBuffer()));
      const problems: ImportProblem[] = [];
      const importer = new Importer({ store: kit.store, clock: kit.clock, appId: app.appId, secret: kit.secret, className, workers: 0, onProblem: (p) => problems.push(p) });
      const [report] = await importer.run(path);
      const { inserted, existing, conflicts, bad, lines } = report;
      await audit(request, 'class.import', `${app.appId}/${className}`, { file: name.slice(0, 200), lines, inserted, existing, conflicts, bad });
      if (!wantsHtml(request)) return consoleHeaders(reply).send({ lines, inserted, existing, conflicts, bad, problems: problems.slice(0, 100) });
      return importResultPage(reply, session(request), app, className, report, problems);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }));

  const indexList = async (rest: MasterRest, className: string) => (await rest.ok('GET', `/indexes/${encodeURIComponent(className)}`)).results;
  scope.get<{ Params: ClassParams }>('/console/apps/:appId/data/:className/indexes', { ...operatorOnly, ...declared({ params: classParams }) }, withClass(async (request, reply, app, rest) =>
    indexesPage(reply, session(request), app, request.params.className, await indexList(rest, request.params.className))));
  scope.post<{ Params: ClassParams }>('/console/apps/:appId/data/:className/indexes', declared({ params: classParams, body: formBody(['name', 'keys', 'unique']) }), withClass(
    async (request, reply, app, rest) => {
      const { className } = request.params;
      const name = field(request.body, 'name').trim();
      const keys = jsonObject(field(request.body, 'keys'), 'keys', {})!;
      const unique = field(request.body, 'unique') === 'true';
      const created = await rest.ok('POST', `/indexes/${encodeURIComponent(className)}`, { body: { name, keys, unique } });
      await audit(request, 'index.create', `${app.appId}/${className}/${name}`, { keys, unique });
      if (!wantsHtml(request)) return consoleHeaders(reply).status(201).send(created);
      return indexesPage(reply, session(request), app, className, await indexList(rest, className), { message: `Index ${name} created (${created.state}).` }, 201);
    },
    async (request, reply, app, error) => {
      const rest = new MasterRest(kit.root, app);
      return indexesPage(reply, session(request), app, request.params.className, await indexList(rest, request.params.className),
        { error: error.message, name: field(request.body, 'name'), keys: field(request.body, 'keys') }, error.status);
    },
  ));
  scope.post<{ Params: ClassParams & { name: string } }>('/console/apps/:appId/data/:className/indexes/:name/drop', declared({ params: pathParams('appId', 'className', 'name'), body: formBody(['confirm']) }), withClass(async (request, reply, app, rest) => {
    const { className, name } = request.params;
    if (field(request.body, 'confirm') !== 'yes' && wantsHtml(request)) return confirmDropPage(reply, session(request), app, className, name);
    await rest.ok('DELETE', `/indexes/${encodeURIComponent(className)}/${encodeURIComponent(name)}`);
    await audit(request, 'index.drop', `${app.appId}/${className}/${name}`, {});
    if (!wantsHtml(request)) return consoleHeaders(reply).send({});
    return indexesPage(reply, session(request), app, className, await indexList(rest, className), { message: `Index ${name} dropped.` });
  }));

  scope.get<{ Params: ObjectParams }>('/console/apps/:appId/data/:className/:objectId', { ...operatorOnly, ...declared({ params: objectParams }) }, withClass(async (request, reply, app, rest) => {
    const object = await rest.ok('GET', objectPath(request.params.className, request.params.objectId), withAcl);
    return objectPage(reply, session(request), app, request.params.className, object);
  }));
  scope.post<{ Params: ObjectParams }>('/console/apps/:appId/data/:className/:objectId', declared({ params: objectParams, body: objectForm }), withClass(
    async (request, reply, app, rest) => {
      const { className, objectId } = request.params;
      const current = await rest.ok('GET', objectPath(className, objectId), withAcl);
      const fields = jsonObject(field(request.body, 'fields'), 'fields', {})!;
      const acl = jsonObject(field(request.body, 'acl'), 'ACL', null);
      const body = editBody(current, fields, acl);
      await rest.ok('PUT', objectPath(className, objectId), { body });
      await audit(request, 'object.update', `${app.appId}/${className}/${objectId}`, { fields: Object.keys(body).filter((k) => k !== 'ACL'), acl: acl !== null });
      return consoleHeaders(reply).redirect(`${classBase(app, className)}/${encodeURIComponent(objectId)}`, 303);
    },
    async (request, reply, app, error) => {
      const { className, objectId } = request.params;
      const current = await new MasterRest(kit.root, app).call('GET', objectPath(className, objectId), withAcl);
      if (current.status !== 200) return messagePage(reply, error.status, 'Not saved', error.message);
      return objectPage(reply, session(request), app, className, current.body, { error: error.message, fields: field(request.body, 'fields'), acl: field(request.body, 'acl') }, error.status);
    },
  ));

  // The same as JSON for scripts and tests (the pages' rules: reads for operators, changes for admins).
  scope.get<{ Params: AppParams }>('/console/api/apps/:appId/classes', { ...operatorOnly, ...declared({ params: appParams }) }, async (request, reply) => {
    const app = await appOf(request);
    if (!app) return notFound(request, reply, 'No application with that id.');
    return consoleHeaders(reply).send({ results: await classCounts(app, new MasterRest(kit.root, app)) });
  });
  scope.get<{ Params: ClassParams }>('/console/api/apps/:appId/classes/:className', { ...operatorOnly, ...declared({ params: classParams, querystring: browseQuery }) }, withClass(async (request, reply, app, rest) => {
    const input = browseInput(request.query as Record<string, unknown>);
    const { rows, next, total } = await browse(app, rest, request.params.className, input, countAsked(request));
    return consoleHeaders(reply).send({ results: rows, count: total?.count ?? null, countKind: total?.kind ?? null, next });
  }));
}
