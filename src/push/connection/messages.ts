import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/** The command numbers of LeanCloud's push connection (messages.proto, CommandType). */
export const command = { ack: 3, error: 7, login: 8, data: 9, echo: 14, loggedin: 15, goaway: 21 } as const;

/** A decoded frame, as far as the push path reads it (messages.proto, GenericCommand). */
export interface GenericCommand {
  cmd?: number;
  appId?: string;
  peerId?: string;
  i?: number;
  installationId?: string;
  service?: number;
  loginMessage?: { systemInfo?: Record<string, unknown> };
  dataMessage?: { ids?: string[]; msg?: Array<{ data: string }>; offline?: boolean };
  ackMessage?: { ids?: string[] };
  errorMessage?: { code: number; reason: string };
  loggedinMessage?: { pushDisabled?: boolean };
  [field: string]: unknown;
}

// The .proto is read where it lies beside this module (the build copies it to dist/ too).
const root = protobuf.parse(readFileSync(new URL('./messages.proto', import.meta.url), 'utf8'), { keepCase: true }).root;
const genericCommand = root.lookupType('roost.push.GenericCommand');

export function encodeCommand(fields: GenericCommand): Uint8Array {
  return genericCommand.encode(genericCommand.fromObject(fields)).finish();
}

/** Decodes one frame; null when it is not a GenericCommand (bad wire data, a required field missing). */
export function decodeCommand(bytes: Uint8Array): GenericCommand | null {
  try {
    return genericCommand.toObject(genericCommand.decode(bytes), { longs: Number, enums: Number, defaults: false }) as GenericCommand;
  } catch {
    return null;
  }
}
