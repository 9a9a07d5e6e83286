import { userPointer } from '../../objects/values.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseWhereParam } from '../../objects/query.ts';
import type { ObjectService } from '../../objects/service.ts';
import type { Friendships } from '../../social/friendships.ts';
import { answerObjects } from '../answer.ts';
import { listParams, listQuery, queryOf, type Query } from '../params.ts';
import { declared, pathParams, writeBody } from '../schema.ts';

/** Follow, unfollow and the lists of a user's followers and followees (the hosted friendship API). */
export function registerFriendshipRoutes(app: FastifyInstance, options: { friendships: Friendships; objects: ObjectService }): void {
  const { friendships, objects } = options;
  const params = pathParams('objectId', 'targetId');

  app.post<{ Params: { objectId: string; targetId: string } }>('/1.1/users/:objectId/friendship/:targetId', declared({ params, body: writeBody }), async (request) => {
    await friendships.follow(request.ctx, request.params.objectId, request.params.targetId, request.body);
    return {};
  });

  app.delete<{ Params: { objectId: string; targetId: string } }>('/1.1/users/:objectId/friendship/:targetId', declared({ params }), async (request) => {
    await friendships.unfollow(request.ctx, request.params.objectId, request.params.targetId);
    return {};
  });

  /** One side of a user's follows as `GET /1.1/classes/<class>?where={"user":<user>}` answers it, with the query's own where, include, keys, limit. */
  async function side(request: FastifyRequest, className: '_Follower' | '_Followee', userId: string, query: Query) {
    const params = listParams(query);
    const own = parseWhereParam(JSON.stringify({ user: userPointer(userId) }));
    const found = await objects.find(request.ctx, className, { ...params, where: { op: 'and', items: [own, params.where] } });
    return answerObjects(objects, request.ctx, found, params);
  }

  const userParams = pathParams('objectId');
  app.get<{ Params: { objectId: string } }>('/1.1/users/:objectId/followers', declared({ params: userParams, querystring: listQuery }), async (request) => ({
    results: await side(request, '_Follower', request.params.objectId, queryOf(request)),
  }));
  app.get<{ Params: { objectId: string } }>('/1.1/users/:objectId/followees', declared({ params: userParams, querystring: listQuery }), async (request) => ({
    results: await side(request, '_Followee', request.params.objectId, queryOf(request)),
  }));
  app.get<{ Params: { objectId: string } }>('/1.1/users/:objectId/followersAndFollowees', declared({ params: userParams, querystring: listQuery }), async (request) => {
    const query = queryOf(request);
    const [followers, followees] = await Promise.all([
      side(request, '_Follower', request.params.objectId, query),
      side(request, '_Followee', request.params.objectId, query),
    ]);
    return { followers, followees };
  });
}
