import type { AppCreation, AppKeys } from './registry.ts';

/** The command-line options that name an application's keys (`roost app create`, `roost import --create-app`). */
export const keyOptions = {
  'app-id': { type: 'string' },
  'app-key': { type: 'string' },
  'master-key': { type: 'string' },
} as const;

export function givenKeys(values: { 'app-id'?: string; 'app-key'?: string; 'master-key'?: string }): Partial<AppKeys> {
  return { appId: values['app-id'], appKey: values['app-key'], masterKey: values['master-key'] };
}

/** One line for the operator: why no application was created. */
export function creationRefusal(creation: Exclude<AppCreation, { outcome: 'created' }>): string {
  if (creation.outcome === 'refused') return `cannot create the application: ${creation.message}`;
  return `an application with id ${creation.appId} already exists`;
}
