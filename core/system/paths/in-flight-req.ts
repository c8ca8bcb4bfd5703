/** `sys/in-flight-req`: the requests this node is answering right now (this one included), on every worker when there are several. */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function inFlightReqPath(services: SystemDeps) {
  return definePath({
    pattern: 'in-flight-req',
    fields: {},
    sudo: true,
    operations: {
      read: {
        summary: 'The requests in flight on this node.',
        handler: async () => ({ raw: { status: 200, body: services.wholeServer ? await services.wholeServer.inFlight() : services.inFlight.snapshot() } }),
      },
    },
    synopsis: 'Requests being answered by this node.',
    description:
      'Each request received and not yet answered, by request id: when it started, the client address, the path and the ' +
      'method (never its data or token), as Vault reports them. Needs sudo.',
  });
}
