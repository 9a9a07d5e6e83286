import type { Config } from '../config.ts';
import type { FileBackend } from './backend.ts';
import { LocalDiskBackend } from './local-disk.ts';
import { S3Backend } from './s3.ts';

/** The backend the configuration names (FILES_BACKEND): an S3-compatible store, or local disk under FILES_DIR. */
export function openFileBackend(config: Config): FileBackend {
  const filesUrl = () => config.filesPublicUrl ?? config.publicUrl;
  return config.s3 ? new S3Backend(config.s3, filesUrl) : new LocalDiskBackend(config.filesDir, filesUrl);
}
