import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { ApiError, fail } from '../../lib/errors.ts';
import { checkMemberId, kindOfMemberType, type BoardStatistic, type Leaderboards, type MemberKind } from '../../leaderboards/service.ts';
import type { Leaderboard, Statistic } from '../../storage/leaderboard-store.ts';
import type { JsonObject } from '../../objects/types.ts';
import type { ObjectService } from '../../objects/service.ts';
import type { ClassAccess } from '../class-access.ts';
import type { RequestContext } from '../context.ts';
import { answerObjects } from '../answer.ts';
import { flag, listParams, param, queryOf, type Query } from '../params.ts';
import { declared, objectBody, pathParams, queryParams } from '../schema.ts';
import { inHashMapOrder } from '../../lib/hash-map-order.ts';

const date = (ms: number) => ({ __type: 'Date', iso: isoDate(ms) });

/**
 * A board as the hosted service answered it (GET, create), its keys in hash-map order as recorded
 * (R:Leaderboard/shoud have properties: more than a Clojure array map's 8 entries; src/lib/hash-map-order.ts).
 */
function boardWire(board: Leaderboard): JsonObject {
  return inHashMapOrder({
    objectId: board.objectId,
    statisticName: board.statisticName,
    memberType: board.memberType,
    order: board.order,
    updateStrategy: board.updateStrategy,
    version: board.version,
    versionChangeInterval: board.versionChangeInterval,
    expiredAt: board.expiredAt === null ? null : date(board.expiredAt),
    activatedAt: date(board.activatedAt),
    createdAt: isoDate(board.createdAt),
    updatedAt: isoDate(board.updatedAt),
  });
}

/** The key a member goes out under, by the board's member type. */
const memberKey: Record<MemberKind, string> = { user: 'user', object: 'object', entity: 'entity' };

function requireLeaderboardMaster(request: FastifyRequest): void {
  if (!request.ctx.master) throw new ApiError('leaderboardMasterKey');
}

/** A comma-separated list parameter: its non-empty names. */
function names(query: Query, name: string): string[] {
  return (param(query, name) ?? '').split(',').map((part) => part.trim()).filter(Boolean);
}

function integer(query: Query, names: readonly string[], fallback: number, max: number): number {
  for (const name of names) {
    const raw = param(query, name);
    if (raw === undefined || raw === '') continue;
    if (!/^\d{1,9}$/.test(raw)) fail('invalidLeaderboard', `${name} must be a non-negative integer.`);
    return Math.min(Number(raw), max);
  }
  return fallback;
}

/** The member a path names: `self` is the session's user. */
function memberOf(ctx: RequestContext, kind: MemberKind, id: string): string {
  checkMemberId(id);
  if (kind !== 'user' || id !== 'self') return id;
  if (!ctx.userId) fail('statisticsOwnerOnly');
  return ctx.userId;
}

/**
 * Who may change a member's values: a user with its own session, anyone with the master key; objects'
 * and entities' values only with the master key (the hosted rules). `overwrite` only with the master key.
 */
function mayWrite(ctx: RequestContext, kind: MemberKind, member: string, overwrite: boolean): void {
  if (ctx.master) return;
  if (kind !== 'user' || overwrite) throw new ApiError('leaderboardMasterKey');
  if (ctx.userId !== member) fail('statisticsOwnerOnly');
}

const statisticWire = (statistic: Statistic): JsonObject => ({
  statisticName: statistic.statisticName,
  version: statistic.version,
  statisticValue: statistic.value,
});

/**
 * Members as they go out: an entity as its id; a user or object as a pointer, with the fields asked for
 * (`selectUserKeys`/`includeUser`, `selectObjectKeys`/`includeObject`) read as the caller reads them, so
 * the ACL applies. Users' fields only for a signed-in caller or the master key, as the hosted service had it.
 */
async function membersWire(
  deps: { access: ClassAccess; objects: ObjectService },
  ctx: RequestContext,
  kind: MemberKind,
  className: string,
  members: readonly string[],
  query: Query,
): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  if (kind === 'entity') {
    for (const member of members) out.set(member, member);
    return out;
  }
  for (const member of members) out.set(member, { __type: 'Pointer', className, objectId: member });
  const [selectName, includeName] = kind === 'user' ? ['selectUserKeys', 'includeUser'] : ['selectObjectKeys', 'includeObject'];
  const included = names(query, includeName);
  const keys = [...new Set([...names(query, selectName), ...included])];
  const allowed = kind === 'object' || ctx.master || ctx.userId !== null;
  if (keys.length === 0 || members.length === 0 || !allowed) return out;
  const unique = [...new Set(members)];
  const params = listParams({
    where: JSON.stringify({ objectId: { $in: unique } }),
    keys: keys.join(','),
    include: included.join(',') || undefined,
    limit: String(unique.length),
    returnACL: 'true',
  });
  // Members are read by id, as GET /1.1/classes/<class>/<id> reads one: under each object's ACL, but not
  // refused by the class's find permission (userQueryPermission, off by default, governs listing users).
  const reader: RequestContext = { ...ctx, app: { ...ctx.app, settings: { ...ctx.app.settings, userQueryPermission: true } } };
  const found = await deps.access.find(reader, className, params);
  for (const object of await answerObjects(deps.objects, ctx, found, params)) {
    for (const path of included) withoutAcl(object, path.split('.'));
    // The pointer's type and class first and its id last, the object's other keys in its own order between
    // (R:Leaderboard/Statistics/getResults: __type, className, updatedAt, ACL, username, createdAt, company, objectId).
    const { objectId, ...fields } = object;
    out.set(objectId as string, { __type: 'Pointer', className, ...fields, objectId });
  }
  return out;
}

/**
 * The objects an include path reaches, without their ACL: the member carries its own ACL, but the pointers
 * included into it do not (the recording Leaderboard/Statistics/getResults: the user's `company` had none).
 */
function withoutAcl(value: unknown, path: readonly string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) withoutAcl(item, path);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (path.length === 0) delete (value as JsonObject).ACL;
  else withoutAcl((value as JsonObject)[path[0]], path.slice(1));
}

const boardParams = pathParams('statisticName');
const memberParams = pathParams('id');
const rankQuery = queryParams('skip', 'limit', 'startPosition', 'maxResultsCount', 'count', 'version', 'includeStatistics',
  'selectUserKeys', 'includeUser', 'selectObjectKeys', 'includeObject');
const statisticsBody = { type: 'array', 'x-error': { kind: 'invalidLeaderboard', message: 'The body must be a JSON array.' } };

/** Leaderboards (docs/leaderboards.md): boards, members' values, ranks, as the hosted `/1.1/leaderboard/…` API. */
export function registerLeaderboardRoutes(
  app: FastifyInstance,
  deps: { leaderboards: Leaderboards; access: ClassAccess; objects: ObjectService },
): void {
  const { leaderboards } = deps;

  app.post('/1.1/leaderboard/leaderboards', { ...declared({ body: objectBody }), preValidation: async (request) => requireLeaderboardMaster(request) }, async (request) =>
    boardWire(await leaderboards.create(request.ctx.appId, request.body as JsonObject)));

  app.get<{ Params: { statisticName: string } }>('/1.1/leaderboard/leaderboards/:statisticName', declared({ params: boardParams }), async (request) =>
    boardWire(await leaderboards.get(request.ctx.appId, request.params.statisticName)));

  app.put<{ Params: { statisticName: string } }>(
    '/1.1/leaderboard/leaderboards/:statisticName',
    { ...declared({ params: boardParams, body: objectBody }), preValidation: async (request) => requireLeaderboardMaster(request) },
    async (request) => {
      const change = request.body as JsonObject;
      const board = await leaderboards.update(request.ctx.appId, request.params.statisticName, change);
      // As the hosted service answered (recordings/Leaderboard_*): what changed, with updatedAt and objectId; a
      // new schedule's expiredAt is not in it, a GET of the board reads it.
      const answer: JsonObject = { updatedAt: isoDate(board.updatedAt) };
      if (change.updateStrategy !== undefined) answer.updateStrategy = board.updateStrategy;
      if (change.versionChangeInterval !== undefined) answer.versionChangeInterval = board.versionChangeInterval;
      answer.objectId = board.objectId;
      return answer;
    },
  );

  app.put<{ Params: { statisticName: string } }>('/1.1/leaderboard/leaderboards/:statisticName/incrementVersion', declared({ params: boardParams }), async (request) => {
    requireLeaderboardMaster(request);
    const board = await leaderboards.reset(request.ctx.appId, request.params.statisticName);
    return {
      objectId: board.objectId,
      version: board.version,
      expiredAt: board.expiredAt === null ? null : date(board.expiredAt),
      activatedAt: date(board.activatedAt),
      updatedAt: isoDate(board.updatedAt),
    };
  });

  app.get<{ Params: { statisticName: string } }>(
    '/1.1/leaderboard/leaderboards/:statisticName/archives',
    declared({ params: boardParams, querystring: queryParams('skip', 'limit') }),
    async (request) => {
      requireLeaderboardMaster(request);
      const query = queryOf(request);
      const archives = await leaderboards.archives(request.ctx.appId, request.params.statisticName, integer(query, ['skip'], 0, 1e9), integer(query, ['limit'], 100, 1000));
      // No archive file: an ended version's ranks stay readable with ?version= (docs/leaderboards.md).
      return {
        results: archives.map((archive) => ({
          objectId: archive.objectId,
          statisticName: archive.statisticName,
          version: archive.version,
          status: 'completed',
          url: null,
          file_key: null,
          activatedAt: date(archive.activatedAt),
          deactivatedAt: date(archive.deactivatedAt),
          createdAt: isoDate(archive.deactivatedAt),
          updatedAt: isoDate(archive.deactivatedAt),
        })),
      };
    },
  );

  app.delete<{ Params: { statisticName: string } }>('/1.1/leaderboard/leaderboards/:statisticName', declared({ params: boardParams }), async (request) => {
    requireLeaderboardMaster(request);
    await leaderboards.remove(request.ctx.appId, request.params.statisticName);
    return {};
  });

  for (const [path, kind] of [['users', 'user'], ['objects', 'object'], ['entities', 'entity']] as const) {
    app.post<{ Params: { id: string } }>(
      `/1.1/leaderboard/${path}/:id/statistics`,
      declared({ params: memberParams, querystring: queryParams('overwrite'), body: statisticsBody }),
      async (request) => {
        const member = memberOf(request.ctx, kind, request.params.id);
        const overwrite = flag(queryOf(request), 'overwrite');
        mayWrite(request.ctx, kind, member, overwrite);
        const kept = await leaderboards.submit(request.ctx.appId, kind, member, request.body, overwrite);
        return { results: kept.map(statisticWire) };
      },
    );

    app.get<{ Params: { id: string } }>(
      `/1.1/leaderboard/${path}/:id/statistics`,
      declared({ params: memberParams, querystring: queryParams('statistics', 'selectUserKeys', 'includeUser', 'selectObjectKeys', 'includeObject') }),
      async (request) => {
        const member = memberOf(request.ctx, kind, request.params.id);
        const query = queryOf(request);
        const asked = names(query, 'statistics');
        const statistics = await leaderboards.statisticsOf(request.ctx.appId, kind, member, asked.length > 0 ? asked : null);
        return { results: await statisticsWithMembers(request.ctx, kind, statistics, query) };
      },
    );

    app.delete<{ Params: { id: string } }>(
      `/1.1/leaderboard/${path}/:id/statistics`,
      declared({ params: memberParams, querystring: queryParams('statistics') }),
      async (request) => {
        const member = memberOf(request.ctx, kind, request.params.id);
        mayWrite(request.ctx, kind, member, false);
        await leaderboards.removeStatistics(request.ctx.appId, kind, member, names(queryOf(request), 'statistics'));
        return {};
      },
    );

    app.post<{ Params: { statisticName: string } }>(
      `/1.1/leaderboard/${path}/statistics/:statisticName`,
      declared({
        params: boardParams,
        querystring: queryParams('selectUserKeys', 'includeUser', 'selectObjectKeys', 'includeObject'),
        body: statisticsBody,
      }),
      async (request) => {
        const statistics = await leaderboards.statisticsOfMembers(request.ctx.appId, kind, request.params.statisticName, request.body);
        return { results: await statisticsWithMembers(request.ctx, kind, statistics, queryOf(request)) };
      },
    );
  }

  /** A member's values with the member (user, object or entity) as the board's type names it. */
  async function statisticsWithMembers(ctx: RequestContext, kind: MemberKind, statistics: BoardStatistic[], query: Query): Promise<JsonObject[]> {
    const byClass = new Map<string, BoardStatistic[]>();
    for (const statistic of statistics) byClass.set(statistic.memberType, [...(byClass.get(statistic.memberType) ?? []), statistic]);
    const members = new Map<string, unknown>();
    for (const [className, ofClass] of byClass) {
      const wire = await membersWire(deps, ctx, kind, className, ofClass.map((s) => s.member), query);
      for (const statistic of ofClass) members.set(`${statistic.statisticName}\0${statistic.member}`, wire.get(statistic.member));
    }
    return statistics.map((statistic) => ({
      statisticName: statistic.statisticName,
      statisticValue: statistic.value,
      version: statistic.version,
      [memberKey[kind]]: members.get(`${statistic.statisticName}\0${statistic.member}`) as JsonObject,
    }));
  }

  async function ranks(request: FastifyRequest, kind: MemberKind | null, statisticName: string, around: string | undefined) {
    const { ctx } = request;
    const query = queryOf(request);
    const rawVersion = param(query, 'version');
    const version = rawVersion === undefined || rawVersion === '' ? undefined : integer(query, ['version'], 0, 1e9);
    const includeStatistics = names(query, 'includeStatistics');
    // Named statistics are checked before the page is read: a name that does not exist is 2100.
    const others = includeStatistics.length > 0 ? await leaderboards.getMany(ctx.appId, includeStatistics) : new Map<string, Leaderboard>();
    const member = around === undefined ? undefined : memberOf(ctx, kind ?? 'user', around);
    const { board, version: read, rankings } = await leaderboards.ranks(ctx.appId, kind, statisticName, {
      skip: integer(query, ['startPosition', 'skip'], 0, 1e9),
      limit: integer(query, ['maxResultsCount', 'limit'], 20, 1000),
      version,
      around: member,
    });
    const boardKind = kindOfMemberType(board.memberType);
    const members = await membersWire(deps, ctx, boardKind, board.memberType, rankings.map((ranking) => ranking.member), query);
    const included = new Map<string, JsonObject[]>();
    for (const other of others.values()) {
      const ofOther = await leaderboards.statisticsOfMembers(ctx.appId, kindOfMemberType(other.memberType), other.statisticName, rankings.map((r) => r.member));
      for (const statistic of ofOther) {
        included.set(statistic.member, [...(included.get(statistic.member) ?? []), { statisticName: statistic.statisticName, statisticValue: statistic.value, version: statistic.version }]);
      }
    }
    // `count` before `results`, as the hosted service answered (R:Leaderboard/Statistics/count).
    const count = flag(query, 'count') ? await leaderboards.count(ctx.appId, board.statisticName, read) : undefined;
    return {
      ...(count === undefined ? {} : { count }),
      results: rankings.map((ranking) => {
        const entry: JsonObject = {
          statisticName: board.statisticName,
          statisticValue: ranking.value,
          rank: ranking.rank,
          [memberKey[boardKind]]: members.get(ranking.member) as JsonObject,
        };
        if (includeStatistics.length > 0) entry.statistics = included.get(ranking.member) ?? [];
        return entry;
      }),
    };
  }

  for (const kind of ['user', 'object', 'entity'] as const) {
    app.get<{ Params: { statisticName: string } }>(`/1.1/leaderboard/leaderboards/${kind}/:statisticName/ranks`, declared({ params: boardParams, querystring: rankQuery }), (request) =>
      ranks(request, kind, request.params.statisticName, undefined));
    app.get<{ Params: { statisticName: string; id: string } }>(`/1.1/leaderboard/leaderboards/${kind}/:statisticName/ranks/:id`, declared({ params: pathParams('statisticName', 'id'), querystring: rankQuery }), (request) =>
      ranks(request, kind, request.params.statisticName, request.params.id));
  }
  // The JavaScript SDK's paths (v4): the board's own member type.
  app.get<{ Params: { statisticName: string } }>('/1.1/leaderboard/leaderboards/:statisticName/ranks', declared({ params: boardParams, querystring: rankQuery }), (request) =>
    ranks(request, null, request.params.statisticName, undefined));
  app.get<{ Params: { statisticName: string; id: string } }>('/1.1/leaderboard/leaderboards/:statisticName/ranks/:id', declared({ params: pathParams('statisticName', 'id'), querystring: rankQuery }), (request) =>
    ranks(request, null, request.params.statisticName, request.params.id));
}
