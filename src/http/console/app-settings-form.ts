import { vendorNames } from '../../apps/settings.ts';
import { credentialFields } from '../../push/vendors/protocols.ts';
import { ApiError } from '../../lib/errors.ts';

/**
 * The application's settings as the console's forms group them. A form is turned into the same
 * partial settings object `PUT /1.1/settings` takes, and AppRegistry.updateSettings checks it with
 * the API's own rules: the console has no validation of its own to drift from them.
 */
export interface Toggle {
  key: string;
  label: string;
  hint: string;
}

export const accountToggles: Toggle[] = [
  { key: 'verifyEmailOnSignup', label: 'Verify email on sign-up', hint: 'Mail a verification link when a user signs up or changes the address.' },
  { key: 'preventLoginWithUnverifiedEmail', label: 'Refuse sign-in with an unverified email', hint: 'Users whose email is not verified cannot sign in with it.' },
  { key: 'forceReloginOnPasswordChange', label: 'New session token on password change', hint: 'Changing the password signs the user out elsewhere.' },
  { key: 'userQueryPermission', label: 'Users may query other users', hint: 'Without it only the master key finds _User objects.' },
];

export const pushToggles: Toggle[] = [
  { key: 'clientPushAllowed', label: 'Clients may send push', hint: 'Allow pushes sent with the app key (a client), not only the master key.' },
  { key: 'commercial', label: 'Commercial application', hint: 'Needed for mixed push.' },
  { key: 'mixedPush', label: 'Mixed push', hint: 'Send through the phone makers’ push services (credentials below).' },
];

export const templateFields = [
  { key: 'verifyEmailSubject', label: 'Verification mail: subject', multiline: false },
  { key: 'verifyEmailText', label: 'Verification mail: text body', multiline: true },
  { key: 'verifyEmailHtml', label: 'Verification mail: HTML body', multiline: true },
  { key: 'passwordResetSubject', label: 'Password reset mail: subject', multiline: false },
  { key: 'passwordResetText', label: 'Password reset mail: text body', multiline: true },
  { key: 'passwordResetHtml', label: 'Password reset mail: HTML body', multiline: true },
] as const;

export const settingsSections = ['accounts', 'push', 'sms', 'templates', 'vendor', 'vendorRemove'] as const;
export type SettingsSection = (typeof settingsSections)[number];

type Form = Record<string, string>;

const orNull = (value: string | undefined): string | null => (value === undefined || value.trim() === '' ? null : value);

function toggles(form: Form, list: Toggle[]): Record<string, boolean> {
  // A checkbox left unticked is not sent: every toggle of the form is set, true or false.
  return Object.fromEntries(list.map((toggle) => [toggle.key, form[toggle.key] === 'on' || form[toggle.key] === 'true']));
}

/** The settings patch a console form stands for; a refusal (107-style) for a form the pages never make. */
export function settingsPatch(section: string, form: Form): Record<string, unknown> {
  switch (section as SettingsSection) {
    case 'accounts':
      return toggles(form, accountToggles);
    case 'push':
      return { ...toggles(form, pushToggles), androidIntentHostname: orNull(form.androidIntentHostname) };
    case 'sms': {
      const sms: Record<string, unknown> = {
        provider: form.provider || 'outbox',
        webhookUrl: orNull(form.webhookUrl),
        signature: orNull(form.signature),
        defaultCountryCode: form.defaultCountryCode?.trim() || null,
      };
      // Write-only: an empty field keeps the stored secret; "forget" removes it.
      if (form.forgetWebhookSecret === 'on') sms.webhookSecret = null;
      else if (form.webhookSecret) sms.webhookSecret = form.webhookSecret;
      return { sms };
    }
    case 'templates':
      return Object.fromEntries(templateFields.map(({ key }) => [key, orNull(form[key]?.replace(/\r\n/g, '\n'))]));
    case 'vendor':
    case 'vendorRemove': {
      const vendor = form.vendor ?? '';
      const profile = (form.profile ?? '').trim();
      if (!(vendorNames as readonly string[]).includes(vendor)) throw new ApiError('incorrectType', `Unknown vendor "${vendor}".`);
      if (section === 'vendorRemove') return { vendors: { [profile]: { [vendor]: null } } };
      const fields = credentialFields[vendor as keyof typeof credentialFields];
      // Credentials merge field by field: a secret left empty keeps the stored one.
      const creds = Object.fromEntries(fields.filter((name) => (form[name] ?? '').trim() !== '').map((name) => [name, form[name].trim()]));
      return { vendors: { [profile]: { [vendor]: creds } } };
    }
    default:
      throw new ApiError('invalidKeyName', `Unknown settings form "${section}".`);
  }
}

/** What the audit log keeps of a change: which settings, never their values (some are secrets). */
export function changedKeys(patch: Record<string, unknown>): string[] {
  const keys: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, deeper] of Object.entries(value)) {
        if (deeper !== null && typeof deeper === 'object') for (const leaf of Object.keys(deeper)) keys.push(`${key}.${inner}.${leaf}`);
        else keys.push(`${key}.${inner}`);
      }
    } else keys.push(key);
  }
  return keys;
}
