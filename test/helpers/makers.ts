import { startFakeMaker, type FakeMaker } from '../fakes/makers.ts';
import { vendors, type VendorName } from '../../src/push/vendors/types.ts';

export type Makers = Record<VendorName, FakeMaker>;

/** The six fake makers on loopback, each with its own clock source for signed timestamps and token lives. */
export async function startMakers(now?: () => number): Promise<Makers> {
  const started = await Promise.all(vendors.map((vendor) => startFakeMaker(vendor, { now })));
  return Object.fromEntries(started.map((fake) => [fake.vendor, fake])) as Makers;
}

/** settings.vendors._default: every maker's credentials, with baseUrl/authUrl pointing at its fake. */
export function vendorSettings(makers: Makers, profile = '_default'): Record<string, Record<string, Record<string, string>>> {
  return { [profile]: Object.fromEntries(Object.values(makers).map((fake) => [fake.vendor, fake.credentials])) };
}

export async function closeMakers(makers: Makers | undefined): Promise<void> {
  if (makers) await Promise.all(Object.values(makers).map((fake) => fake.close()));
}

/** Every registration id a maker was sent, in order. */
export const sentTokens = (fake: FakeMaker) => fake.sends.flatMap((send) => send.tokens);
