import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmailVerification } from '../../accounts/email-verification.ts';
import type { PasswordReset } from '../../accounts/password-reset.ts';
import { emailBodySchema, linkFailureMessages, type LinkFailed } from '../../accounts/mail-links.ts';
import type { AppRegistry } from '../../apps/registry.ts';
import { isoDate } from '../../lib/clock.ts';
import { ApiError } from '../../lib/errors.ts';
import { declared, pathParams, queryParams } from '../schema.ts';
import { queryOf } from '../params.ts';
import {
  linkFailedPage,
  passwordChangedPage,
  resetFormPage,
  secretUrlHeaders,
  verifiedPage,
} from '../mail-pages.ts';

interface TokenParams {
  token: string;
}

type EmailBody = { Body: { email: string } };

export interface EmailRouteOptions {
  verification: EmailVerification;
  reset: PasswordReset;
}

/** The SDK calls, under the application's keys: they mail a link and answer `{}`. */
export function registerEmailRoutes(api: FastifyInstance, options: EmailRouteOptions): void {
  const { verification, reset } = options;
  api.post<EmailBody>('/1.1/requestEmailVerify', declared({ body: emailBodySchema }), async (request) => {
    await verification.request(request.ctx.app, request.body);
    return {};
  });
  api.post<EmailBody>('/1.1/requestPasswordReset', declared({ body: emailBodySchema }), async (request) => {
    await reset.request(request.ctx.app, request.body);
    return {};
  });
}

type Answer = { kind: 'jsonp'; callback: string } | { kind: 'html' } | { kind: 'json' };

/** JavaScript identifiers, dotted: nothing else can be echoed into a script. */
const callbackName = /^[A-Za-z_$][\w$]{0,63}(\.[A-Za-z_$][\w$]{0,63}){0,4}$/;

function one(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** JSONP when a callback is named, HTML for a browser (a navigation or a form post), JSON otherwise. */
function answerOf(request: FastifyRequest): Answer | ApiError {
  const query = queryOf(request) as Record<string, unknown>;
  if (query.callback !== undefined) {
    const callback = one(query.callback);
    if (!callback || !callbackName.test(callback)) return new ApiError('invalidJson', 'callback must be a JavaScript function name.');
    return { kind: 'jsonp', callback };
  }
  if (request.method === 'POST') return request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ? { kind: 'html' } : { kind: 'json' };
  return (request.headers.accept ?? '').includes('text/html') ? { kind: 'html' } : { kind: 'json' };
}

function sendData(reply: FastifyReply, answer: Answer, status: number, body: object): FastifyReply {
  secretUrlHeaders(reply);
  if (answer.kind === 'jsonp') {
    // JSONP cannot read a status: the body tells (an `error` key means failure).
    return reply
      .status(200)
      .type('application/javascript; charset=utf-8')
      .send(`/**/ typeof ${answer.callback} === 'function' && ${answer.callback}(${JSON.stringify(body)});`);
  }
  return reply.status(status).send(body);
}

function sendError(reply: FastifyReply, answer: Answer, error: ApiError): FastifyReply {
  return sendData(reply, answer, error.status, error.toBody());
}

function failureError(failed: LinkFailed): ApiError {
  return new ApiError('mailLinkInvalid', linkFailureMessages[failed.reason]);
}

/** The field of a JSON body, a form or (for JSONP) the query string. */
function field(request: FastifyRequest, name: string): unknown {
  const body = request.body;
  if (body && typeof body === 'object' && !Array.isArray(body) && name in body) return (body as Record<string, unknown>)[name];
  return request.method === 'GET' ? one((queryOf(request) as Record<string, unknown>)[name]) : undefined;
}

/**
 * The addresses a user opens from a mail, outside the key check (a browser sends no keys):
 * the token itself names the application and the user. Both /1 and /1.1 are served.
 */
export async function registerEmailPages(
  app: FastifyInstance,
  options: EmailRouteOptions & { registry: AppRegistry },
): Promise<void> {
  const { verification, reset, registry } = options;
  const appName = async (appId: string | null) => (appId ? ((await registry.get(appId))?.name ?? null) : null);

  await app.register(async (pages) => {
    // The reset page's form posts url-encoded fields; only these routes accept them.
    pages.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );

    const verify = async (request: FastifyRequest<{ Params: TokenParams }>, reply: FastifyReply) => {
      const answer = answerOf(request);
      if (answer instanceof ApiError) return sendError(reply, { kind: 'json' }, answer);
      const outcome = await verification.verify(request.params.token);
      if (!outcome.ok) {
        if (answer.kind !== 'html') return sendError(reply, answer, failureError(outcome));
        const retry = 'Open the app and ask for a new verification mail.';
        return linkFailedPage(reply, await appName(outcome.appId), linkFailureMessages[outcome.reason], retry);
      }
      const { user } = outcome;
      if (answer.kind === 'html') {
        return verifiedPage(reply, (await appName(outcome.appId)) ?? '', String(user.data.email ?? ''));
      }
      return sendData(reply, answer, 200, { updatedAt: isoDate(user.updatedAt), objectId: user.objectId });
    };

    const resetPassword = async (request: FastifyRequest<{ Params: TokenParams }>, reply: FastifyReply) => {
      const answer = answerOf(request);
      if (answer instanceof ApiError) return sendError(reply, { kind: 'json' }, answer);
      const { token } = request.params;
      const password = field(request, 'password');
      // Opening the mailed link shows the form; it does not touch the token.
      if (request.method === 'GET' && answer.kind !== 'jsonp' && password === undefined) return showForm(token, reply);
      if (answer.kind === 'html') {
        const confirm = field(request, 'confirm');
        if (confirm !== undefined && confirm !== password) {
          return showForm(token, reply, 'The two passwords do not match. Enter the same new password twice.');
        }
      }
      let outcome;
      try {
        outcome = await reset.reset(token, password);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (answer.kind === 'html') return showForm(token, reply, error.message);
        return sendError(reply, answer, error);
      }
      if (!outcome.ok) {
        if (answer.kind !== 'html') return sendError(reply, answer, failureError(outcome));
        return linkFailedPage(reply, await appName(outcome.appId), linkFailureMessages[outcome.reason], resetRetry);
      }
      if (answer.kind === 'html') return passwordChangedPage(reply, (await appName(outcome.appId)) ?? '');
      return sendData(reply, answer, 200, {});
    };

    const resetRetry = 'Open the app and ask for a new password reset mail.';
    const showForm = async (token: string, reply: FastifyReply, error?: string) => {
      const found = await reset.inspect(token);
      if (!found.ok) return linkFailedPage(reply, await appName(found.appId), linkFailureMessages[found.reason], resetRetry);
      const name = (await appName(found.appId)) ?? '';
      return resetFormPage(reply, { appName: name, username: found.username, error, status: error ? 400 : 200 });
    };

    // Declared, not refused: a field of another shape is read as absent, as above (field, one).
    const params = pathParams('token');
    const verifyRoute = declared({ params, querystring: queryParams('callback') });
    const resetQuery = queryParams('callback', 'password');
    const resetForm = declared({ params, querystring: resetQuery, body: { properties: { password: {}, confirm: {} } } });
    for (const version of ['1', '1.1']) {
      pages.get<{ Params: TokenParams }>(`/${version}/verifyEmail/:token`, verifyRoute, verify);
      pages.post<{ Params: TokenParams }>(`/${version}/verifyEmail/:token`, verifyRoute, verify);
      pages.get<{ Params: TokenParams }>(`/${version}/resetPassword/:token`, declared({ params, querystring: resetQuery }), resetPassword);
      pages.post<{ Params: TokenParams }>(`/${version}/resetPassword/:token`, resetForm, resetPassword);
    }
  });
}
