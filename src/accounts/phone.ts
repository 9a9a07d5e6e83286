/** Country calling code assumed for numbers written without one, as the hosted service does (+86). */
export const defaultCountryCode = '86';

/**
 * A phone number in E.164 form (`+` and 7 to 15 digits), or null if it cannot be one.
 * Spaces, dashes, dots and parentheses are dropped; `00` stands for `+`; a number without a
 * country code gets `defaultCountryCode`.
 */
export function normalizePhone(value: unknown, countryCode: string = defaultCountryCode): string | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  let digits = value.trim().replace(/[\s\-.()]/g, '');
  if (digits.startsWith('00')) digits = `+${digits.slice(2)}`;
  if (!digits.startsWith('+')) digits = `+${countryCode}${digits}`;
  return /^\+[1-9]\d{6,14}$/.test(digits) ? digits : null;
}
