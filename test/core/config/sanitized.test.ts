/** The sanitized configuration never carries a secret. */
import { expect } from 'chai';
import { parseConfig } from '../../../core/config/config.js';
import { sanitizedConfig } from '../../../core/config/sanitized.js';

describe('sanitized configuration', function () {
  it('leaves the PostgreSQL connection URL out whole: no password, user, host or database', function () {
    const config = parseConfig(
      {
        listener: { tcp: { address: '0.0.0.0:8200', tls_disable: true, telemetry: { unauthenticated_metrics_access: true } } },
        storage: { postgresql: { connection_url: 'postgres://kw-user:s3cret-pass@db.internal:5432/kwdb?sslmode=require', table: 'kv_store', ha_enabled: true } },
        api_addr: 'https://node1.internal:8200',
        telemetry: { prometheus_retention_time: '1h', disable_hostname: true },
      },
      '/etc/keywarden',
    );
    const shown = sanitizedConfig(config);
    const text = JSON.stringify(shown);
    for (const secret of ['s3cret-pass', 'kw-user', 'db.internal', 'kwdb', 'connection_url']) expect(text).not.to.include(secret);
    expect(shown.storage).to.deep.equal({ type: 'postgresql', table: 'kv_store', ha_enabled: true, max_parallel: 10 });
    expect(shown.telemetry).to.deep.equal({ prometheus_retention_time: 3600, disable_hostname: true, filter_default: true });
    expect((shown.listeners as { config: Record<string, unknown> }[])[0]!.config.telemetry).to.deep.equal({ unauthenticated_metrics_access: true });
  });
});
