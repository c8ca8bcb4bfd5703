/**
 * `sys/metrics`: this node's metrics, as Vault's in-memory JSON (the default) or the Prometheus
 * text format (`?format=prometheus`). Needs a token with read on sys/metrics, unless the listener
 * has `telemetry { unauthenticated_metrics_access = true }` (core/pipeline/route.ts).
 */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function metricsPath(services: SystemDeps) {
  return definePath({
    pattern: 'metrics',
    fields: {
      format: {
        type: 'string',
        description: 'prometheus for the Prometheus text exposition format; unset for JSON.',
        allowedValues: ['prometheus'],
      },
    },
    operations: {
      read: {
        summary: "This node's metrics.",
        handler: async (_req, input) => {
          const metrics = services.metrics;
          if (input.format === 'prometheus') {
            if (!metrics.prometheusEnabled) {
              throw new BadRequestError('prometheus is not enabled: telemetry.prometheus_retention_time is 0 in the configuration');
            }
            const { contentType, text } = await metrics.prometheus();
            return { raw: { status: 200, body: text, contentType } };
          }
          return { raw: { status: 200, body: await metrics.json(services.clock.now()) } };
        },
      },
    },
    synopsis: "Export this node's metrics.",
    description:
      'Requests by mount, operation and status with latency histograms, transit operations and batch sizes, crypto engine ' +
      'dispatch, logins, tokens, seal and HA state, storage latency, and the event loop and memory of the process. ' +
      'docs/metrics.md lists every metric.',
  });
}
