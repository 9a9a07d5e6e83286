import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isoDate, type Clock } from '../../lib/clock.ts';
import { compileCql, parsePvalues, type CqlWrite } from '../../objects/cql.ts';
import { parseWhere } from '../../objects/query.ts';
import type { ObjectService } from '../../objects/service.ts';
import type { JsonObject } from '../../objects/types.ts';
import { isObject } from '../../objects/values.ts';
import { findAnswer, type ClassAccess } from '../class-access.ts';
import type { RequestContext } from '../context.ts';
import { param, queryOf } from '../params.ts';
import { declared, queryParams } from '../schema.ts';

/**
 * A CQL write through the class's service, as the REST write it stands for: each inserted row answers
 * as a create does (`objectId`, `createdAt`), an update as an update (`objectId`, `updatedAt`), a delete
 * with nothing. Rows are inserted one after another; one refused stops the rest (CQL had no transactions).
 */
async function write(access: ClassAccess, ctx: RequestContext, statement: CqlWrite): Promise<JsonObject[]> {
  const { className } = statement;
  switch (statement.kind) {
    case 'insert': {
      const created: JsonObject[] = [];
      for (const row of statement.rows) {
        const saved = await access.create(ctx, className, row);
        created.push({ objectId: saved.objectId, createdAt: isoDate(saved.createdAt) });
      }
      return created;
    }
    case 'update': {
      const condition = statement.condition === null ? undefined : parseWhere(statement.condition);
      const saved = await access.update(ctx, className, statement.objectId, statement.body, condition);
      return [{ objectId: saved.objectId, updatedAt: isoDate(saved.updatedAt) }];
    }
    case 'delete':
      await access.remove(ctx, className, statement.objectId, statement.condition === null ? undefined : parseWhere(statement.condition));
      return [];
  }
}

/**
 * /1.1/cloudQuery: a CQL statement (src/objects/cql.ts). A select is answered as the find it compiles to,
 * with the class named and, for count(*), the count: `{"results":[…],"className":"X","count":N}`
 * (reference §13); insert, update and delete as `{"results":[…],"className":"X"}`.
 */
export function registerCloudQueryRoutes(app: FastifyInstance, options: { clock: Clock; access: ClassAccess; objects: ObjectService }): void {
  const handler = async (request: FastifyRequest, _reply: FastifyReply) => {
    const query = queryOf(request);
    // The SDKs send GET with a query string; a POST body (a statement over a URL's length) is read too.
    const body = isObject(request.body) ? request.body : {};
    const cql = body.cql ?? param(query, 'cql');
    const statement = compileCql(cql, parsePvalues(body.pvalues ?? param(query, 'pvalues')), options.clock.now());
    if (statement.kind !== 'find') return { results: await write(options.access, request.ctx, statement), className: statement.className };
    const found = await findAnswer(options.access, options.objects, request.ctx, statement.className, statement.params);
    const out: { results: JsonObject[]; className: string; count?: number } = { results: found.results, className: statement.className };
    if (statement.count) out.count = found.count;
    return out;
  };
  const querystring = queryParams('cql', 'pvalues');
  app.get('/1.1/cloudQuery', declared({ querystring }), handler);
  // A body that is not an object is read as none: the statement is then the query string's.
  app.post('/1.1/cloudQuery', declared({ querystring, body: { properties: { cql: {}, pvalues: {} } } }), handler);
}
