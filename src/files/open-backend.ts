import type { Config } from '../config.ts';
import type { FileBackend } from './backend.ts';
import { LocalDiskBackend } from './local-disk.ts';

/**
 * The backend the configuration names (FILES_BACKEND): an S3-compatible store, or local disk under FILES_DIR.
 * The AWS SDK is loaded only when S3 is configured: importing it costs every process ~200 ms of CPU at start
 * (each server, each `roost` command), which a node on local disk would pay for nothing.
 */
export async function openFileBackend(config: Config): Promise<FileBackend> {
  const filesUrl = () => config.filesPublicUrl ?? config.publicUrl;
  if (!config.s3) return new LocalDiskBackend(config.filesDir, filesUrl);
  const { S3Backend } = await import('./s3.ts');
  return new S3Backend(config.s3, filesUrl);
}
