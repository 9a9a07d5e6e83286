import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { minOperatorPassword, type OperatorChange, type OperatorService, type TotpEnrolment } from '../../console/operators.ts';
import { randomToken } from '../../lib/crypto.ts';
import { ApiError } from '../../lib/errors.ts';
import { accountPage, operatorsPage, type Shown } from '../console/operators-page.ts';
import { consoleHeaders } from '../console/pages.ts';
import { backTo, field, isApi, notice, operatorOnly, session } from '../console/routing.ts';
import { formBody } from '../console/input.ts';
import { declared, pathParams, queryParams } from '../schema.ts';

type Named = { Params: { name: string } };

const params = pathParams('name');
const createForm = declared({ body: formBody(['name', 'password', 'role']) });
const roleForm = declared({ params, body: formBody(['role']) });
const passwordForm = declared({ params, body: formBody(['password']) });
const namedForm = declared({ params, body: formBody([]) });
/** A page that shows the notice a redirect named (`done`). */
const page = { ...operatorOnly, ...declared({ querystring: queryParams('done') }) };
const ownForm = (names: string[]) => ({ ...operatorOnly, ...declared({ body: formBody(names) }) });

const refusals: Record<Exclude<OperatorChange, 'done'>, ApiError> = {
  unknown: new ApiError('objectNotFound', 'No operator of that name.'),
  taken: new ApiError('duplicateValue', 'An operator of that name exists.'),
  badName: new ApiError('incorrectType', 'A name is 1 to 64 letters, digits or . _ @ -.'),
  badRole: new ApiError('incorrectType', 'The role is admin or viewer.'),
  weakPassword: new ApiError('incorrectType', `A password has at least ${minOperatorPassword} characters.`),
  wrongCode: new ApiError('incorrectType', 'The code is wrong or expired: enter the one the app shows now.'),
  lastAdmin: new ApiError('forbidden', 'The last admin stays an admin: make another operator admin first.'),
};

const noTotp = new ApiError('forbidden', 'Recovery codes come with TOTP: set up TOTP first.');

const apiPassword = (shown: { name: string; value: string }) => ({ name: shown.name, password: shown.value });

function check(outcome: OperatorChange): void {
  if (outcome !== 'done') throw refusals[outcome];
}

const notices = {
  role: 'The role is changed.',
  totpReset: 'TOTP is removed; the operator signs in with the password alone.',
  deleted: 'The operator is deleted.',
  totpOn: 'TOTP is on: sign-in asks for a code from now on.',
  recoveryCodes: 'New recovery codes: the old ones no longer work.',
};

/**
 * Operators managed from the console (admins: create, change role, new password, remove TOTP, delete)
 * and each operator's own TOTP enrolment (/console/account). OperatorService does the work and the
 * audit, as for `roost operator`. A password the console sets is generated and shown once.
 */
export async function registerConsoleOperatorRoutes(scope: FastifyInstance, deps: { operators: OperatorService }): Promise<void> {
  const { operators } = deps;
  const actor = (request: FastifyRequest) => session(request).operator.name;

  const list = async (request: FastifyRequest, reply: FastifyReply, shown: Shown = {}, status = 200) =>
    operatorsPage(reply, session(request), await operators.list(), { notice: notice(request, notices), ...shown }, status);

  const create = async (request: FastifyRequest) => {
    const name = field(request.body, 'name').trim();
    const password = field(request.body, 'password') || randomToken(18);
    check(await operators.create(actor(request), name, field(request.body, 'role') || 'viewer', password));
    return { name, value: password };
  };
  const newPassword = async (request: FastifyRequest<Named>) => {
    const password = field(request.body, 'password') || randomToken(18);
    check(await operators.setPassword(actor(request), request.params.name, password));
    return { name: request.params.name, value: password };
  };
  const remove = async (request: FastifyRequest<Named>) => {
    if (request.params.name === actor(request)) throw new ApiError('forbidden', 'An operator cannot delete itself.');
    const target = (await operators.list()).find((op) => op.name === request.params.name);
    if (target?.role === 'admin' && (await operators.list()).filter((op) => op.role === 'admin').length <= 1) check('lastAdmin');
    check(await operators.delete(actor(request), request.params.name));
  };

  // A form's refusal is shown on the page it came from; the API answers {code, error}.
  const onList = async (request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>) => {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ApiError) || isApi(request)) throw error;
      return list(request, reply, { error: error.message }, error.status);
    }
  };

  scope.get('/console/operators', page, async (request, reply) => list(request, reply));
  scope.post('/console/operators', createForm, async (request, reply) => onList(request, reply, async () => list(request, reply, { password: await create(request) }, 201)));
  scope.post<Named>('/console/operators/:name/role', roleForm, async (request, reply) =>
    onList(request, reply, async () => {
      check(await operators.setRole(actor(request), request.params.name, field(request.body, 'role')));
      return backTo(reply, '/console/operators', 'role');
    }));
  scope.post<Named>('/console/operators/:name/password', passwordForm, async (request, reply) =>
    onList(request, reply, async () => list(request, reply, { password: await newPassword(request) })));
  scope.post<Named>('/console/operators/:name/totp-reset', namedForm, async (request, reply) =>
    onList(request, reply, async () => {
      check(await operators.resetTotp(actor(request), request.params.name));
      return backTo(reply, '/console/operators', 'totpReset');
    }));
  scope.post<Named>('/console/operators/:name/delete', namedForm, async (request, reply) =>
    onList(request, reply, async () => {
      await remove(request);
      return backTo(reply, '/console/operators', 'deleted');
    }));

  // The key and its QR are on the answer that made them (and after a mistyped code), never on a plain visit.
  const account = async (request: FastifyRequest, reply: FastifyReply, options: { enrolment?: TotpEnrolment | null; shown?: Shown; status?: number } = {}) => {
    const { operator } = session(request);
    const fresh = (await operators.list()).find((op) => op.name === operator.name);
    const shown = { notice: notice(request, notices), ...options.shown };
    const totp = fresh?.totp ? { recoveryCodesLeft: await operators.recoveryCodesLeft(operator) } : null;
    return accountPage(reply, session(request), totp, options.enrolment ?? null, shown, options.status);
  };
  scope.get('/console/account', page, async (request, reply) => account(request, reply));
  // Enrolment is each operator's own change (a viewer too): it only makes its own sign-in stricter.
  scope.post('/console/account/totp', ownForm([]), async (request, reply) => {
    return account(request, reply, { enrolment: await operators.beginTotp(session(request).operator) });
  });
  scope.post('/console/account/totp/confirm', ownForm(['code']), async (request, reply) => {
    const outcome = await operators.confirmTotp(session(request).operator, field(request.body, 'code'));
    if (typeof outcome === 'string') {
      const refusal = refusals[outcome];
      return account(request, reply, { enrolment: await operators.pendingTotp(session(request).operator), shown: { error: refusal.message }, status: refusal.status });
    }
    // Not a redirect: the recovery codes are on this answer only.
    return account(request, reply, { shown: { notice: notices.totpOn, recoveryCodes: outcome.recoveryCodes } });
  });
  scope.post('/console/account/recovery-codes', ownForm([]), async (request, reply) => {
    const outcome = await operators.renewRecoveryCodes(session(request).operator);
    if (outcome === 'unknown') return account(request, reply, { shown: { error: noTotp.message }, status: noTotp.status });
    return account(request, reply, { shown: { notice: notices.recoveryCodes, recoveryCodes: outcome.recoveryCodes } });
  });

  const view = (op: { name: string; role: string; totp: boolean; createdAt: number }) =>
    ({ name: op.name, role: op.role, totp: op.totp, createdAt: new Date(op.createdAt).toISOString() });
  scope.get('/console/api/operators', operatorOnly, async (_request, reply) => consoleHeaders(reply).send({ results: (await operators.list()).map(view) }));
  scope.post('/console/api/operators', createForm, async (request, reply) => consoleHeaders(reply).status(201).send(apiPassword(await create(request))));
  scope.post<Named>('/console/api/operators/:name/role', roleForm, async (request, reply) => {
    check(await operators.setRole(actor(request), request.params.name, field(request.body, 'role')));
    return consoleHeaders(reply).send({});
  });
  scope.post<Named>('/console/api/operators/:name/password', passwordForm, async (request, reply) => consoleHeaders(reply).send(apiPassword(await newPassword(request))));
  scope.post<Named>('/console/api/operators/:name/totp-reset', namedForm, async (request, reply) => {
    check(await operators.resetTotp(actor(request), request.params.name));
    return consoleHeaders(reply).send({});
  });
  scope.delete<Named>('/console/api/operators/:name', namedForm, async (request, reply) => {
    await remove(request);
    return consoleHeaders(reply).send({});
  });
  scope.post('/console/api/account/totp', ownForm([]), async (request, reply) => consoleHeaders(reply).send(await operators.beginTotp(session(request).operator)));
  scope.post('/console/api/account/totp/confirm', ownForm(['code']), async (request, reply) => {
    const outcome = await operators.confirmTotp(session(request).operator, field(request.body, 'code'));
    if (typeof outcome === 'string') throw refusals[outcome];
    return consoleHeaders(reply).send({ totp: true, recoveryCodes: outcome.recoveryCodes });
  });
  scope.post('/console/api/account/recovery-codes', ownForm([]), async (request, reply) => {
    const outcome = await operators.renewRecoveryCodes(session(request).operator);
    if (outcome === 'unknown') throw noTotp;
    return consoleHeaders(reply).send(outcome);
  });
}
