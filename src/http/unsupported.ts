import { ApiError } from '../lib/errors.ts';
import type { ClassHandlers } from './routes/classes.ts';
import type { ClassAccessOverrides } from './class-access.ts';

/**
 * APIs of the hosted service Roost does not have yet, by path (README "Not supported (yet)"). A request
 * for one answers 404 naming the feature, so an app's log says what is missing rather than "Not found.".
 */
const routeFeatures: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/1\.1\/(functions|call)(\/|$)/, 'cloud functions'],
  [/^\/1\.1\/qiniu(\/|$)/, 'files'],
  [/^\/1\.1\/(requestCaptcha|verifyCaptcha)(\/|$)/, 'captcha'],
  [/^\/1\.1\/rtm(\/|$)/, 'instant messaging'],
  [/^\/1\.1\/search(\/|$)/, 'app search'],
  [/^\/1\.1\/(stats|statistics)(\/|$)/, 'analytics'],
];

/** Built-in classes of those features: reading or writing them as plain objects would mean something else later. */
const classFeatures: Readonly<Record<string, string>> = {
  _Conversation: 'instant messaging',
};

/**
 * A path as an error may show it: up to its first segment after the version, so no id or mailed token
 * that follows is echoed back (`/1.1/functions/hello` → `/1.1/functions/…`).
 */
function shownPath(path: string): string {
  const segments = path.split('/');
  const kept = /^1(\.1)?$/.test(segments[1] ?? '') ? 3 : 2;
  const shown = segments.slice(0, kept).map((segment) => (segment.length > 64 ? `${segment.slice(0, 64)}…` : segment));
  return shown.join('/') + (segments.length > kept ? '/…' : '') || '/';
}

/** The hosted feature a path belongs to, when it is one Roost does not have yet. */
export function unsupportedFeatureOf(path: string): string | undefined {
  return routeFeatures.find(([pattern]) => pattern.test(path))?.[1];
}

/** What a request for a route Roost does not have answers: 404, naming the feature when it is a known one. */
export function routeNotSupported(method: string, url: string): ApiError {
  const path = url.split('?')[0];
  const feature = unsupportedFeatureOf(path);
  const route = `${method} ${shownPath(path)}`;
  return new ApiError('routeNotFound', feature ? `Not supported yet: ${feature} (${route}).` : `Not supported: Roost has no API ${route}.`);
}

function refusal(className: string, feature: string): () => Promise<never> {
  return async () => {
    throw new ApiError('notSupported', `Not supported yet: ${feature} (${className}).`);
  };
}

/** Handlers for the built-in classes of features Roost does not have: every request refused, naming it. */
export function unsupportedClassHandlers(): Record<string, ClassHandlers> {
  return Object.fromEntries(
    Object.entries(classFeatures).map(([className, feature]) => {
      const refuse = refusal(className, feature);
      return [className, { create: refuse, get: refuse, update: refuse, remove: refuse, find: refuse, admit: { create: refuse, update: refuse } }];
    }),
  );
}

/** The same classes as scan and CQL reach them: refused alike. */
export function unsupportedClassAccess(): ClassAccessOverrides {
  return Object.fromEntries(
    Object.entries(classFeatures).map(([className, feature]) => {
      const refuse = refusal(className, feature);
      return [className, { create: refuse, count: refuse, update: refuse, remove: refuse, find: refuse }];
    }),
  );
}
