// Entry of a parse thread when Roost runs from its TypeScript sources (tsx): loads the
// TypeScript worker through tsx's loader, as bin/roost.js does. The build runs parse-worker.js.
import { register } from 'tsx/esm/api';

register();
await import('./parse-worker.ts');
