// The yardstick of bench/objects.ts: a bare Fastify route answering a fixed JSON, nothing else
// (no logger, no plugins, no auth, no storage). Roost's figures are read as a share of this one's.
import Fastify from 'fastify';

// About the size of a seeded object as Roost answers it, so both send similar bytes.
const fixed = {
  title: 'item 1234',
  group: 34,
  score: 5678,
  tags: ['bench', 'g34'],
  owner: 'bench',
  objectId: '65a1f0c2e4b0a1b2c3d4e5f6',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

const app = Fastify({ logger: false });
app.get('/bare', async () => fixed);
app.get('/bare/:id', async () => fixed);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3999) });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
