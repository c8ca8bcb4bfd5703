/**
 * The in-process half of the isolation benchmark (bench/plugin-isolation.bench.ts): `ping` answers
 * a constant, `value/:name` stores a small value. The isolated half runs the same handlers from a
 * module the benchmark writes beside this one (PING_MODULE_SOURCE), registered in the catalog.
 */
import { FrameworkBackend, definePath, type PluginManifest } from '../../sdk/index.js';

const manifest: PluginManifest = {
  name: 'bench-ping',
  kind: 'secret',
  version: '1.0.0',
  description: 'Benchmark: the smallest request a plugin can answer (not for production).',
  factory: () =>
    new FrameworkBackend({
      description: 'benchmark ping',
      paths: [
        definePath({
          pattern: 'ping',
          fields: {},
          operations: { read: { summary: 'Pong.', handler: async () => ({ data: { pong: true } }) } },
          synopsis: 'Pong.',
          description: 'A constant answer.',
        }),
        definePath({
          pattern: 'value/:name',
          fields: { name: { type: 'string', description: 'Key.', required: true }, value: { type: 'string', description: 'Value.' } },
          operations: {
            update: {
              summary: 'Store.',
              handler: async (req, input) => {
                await req.storage.put(`v/${input.name}`, Buffer.from(input.value ?? ''));
                return null;
              },
            },
          },
          synopsis: 'Store a value.',
          description: 'One storage write.',
        }),
      ],
    }),
};

export default manifest;

/** The same plugin as an external module (one file importing keywarden/sdk), named bench-ping-isolated. */
export const PING_MODULE_SOURCE = `import { FrameworkBackend, definePath } from 'keywarden/sdk';
export default {
  name: 'bench-ping-isolated',
  kind: 'secret',
  version: '1.0.0',
  description: 'Benchmark: ping, isolated.',
  factory: () => new FrameworkBackend({
    description: 'benchmark ping (isolated)',
    paths: [
      definePath({
        pattern: 'ping',
        fields: {},
        operations: { read: { summary: 'Pong.', handler: async () => ({ data: { pong: true } }) } },
        synopsis: 'Pong.',
        description: 'A constant answer.',
      }),
      definePath({
        pattern: 'value/:name',
        fields: { name: { type: 'string', description: 'Key.', required: true }, value: { type: 'string', description: 'Value.' } },
        operations: { update: { summary: 'Store.', handler: async (req, input) => { await req.storage.put('v/' + input.name, Buffer.from(input.value ?? '')); return null; } } },
        synopsis: 'Store a value.',
        description: 'One storage write.',
      }),
    ],
  }),
};
`;
