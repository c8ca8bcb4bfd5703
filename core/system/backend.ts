/** The sys backend, mounted at `sys/`: built on the same framework as every plugin. */
import { FrameworkBackend } from '../framework/index.js';
import type { SystemDeps } from './services.js';
import { initPath } from './paths/init.js';
import { unsealPath } from './paths/unseal.js';
import { sealStatusPath } from './paths/seal-status.js';
import { sealBackendStatusPath } from './paths/seal-backend-status.js';
import { sealPath } from './paths/seal.js';
import { healthPath } from './paths/health.js';
import { leaderPath, stepDownPath } from './paths/leader.js';
import { haStatusPath } from './paths/ha-status.js';
import { configCorsPath } from './paths/config-cors.js';
import { passwordPolicyPaths } from './paths/policies-password.js';
import { keyStatusPath, rotatePath } from './paths/key-status.js';
import { rotateConfigPath } from './paths/rotate-config.js';
import { mountTablePaths } from './paths/mounts.js';
import { remountPath } from './paths/remount.js';
import { remountStatusPath } from './paths/remount-status.js';
import { MountMigrations } from './mount-migrations.js';
import { pluginsReloadPath } from './paths/plugins-reload.js';
import { pluginsCatalogPath } from './paths/plugins-catalog.js';
import { pluginsCatalogTypePath } from './paths/plugins-catalog-type.js';
import { pluginsCatalogNamePath } from './paths/plugins-catalog-name.js';
import { policyPaths } from './paths/policies.js';
import { capabilityPaths } from './paths/capabilities.js';
import { auditPaths } from './paths/audit.js';
import { auditedHeaderPaths } from './paths/config-auditing-request-headers.js';
import { openApiPath } from './paths/openapi.js';
import { wrappingPaths } from './paths/wrapping.js';
import { toolPaths } from './paths/tools.js';
import { RECOVERY_KEYS, rekeyBackupPath, rekeyInitPath, rekeyUpdatePath, rekeyVerifyPath } from './paths/rekey.js';
import {
  generateRootAttemptPath,
  generateRootLegacyPath,
  generateRootTokenAttemptPath,
  generateRootTokenUpdatePath,
  generateRootUpdatePath,
} from './paths/generate-root.js';
import { decodeTokenPath } from './paths/decode-token.js';
import { internalUiMountListPath, internalUiMountsPath } from './paths/internal-ui-mounts.js';
import { storageSnapshotPaths } from './paths/storage-snapshot.js';
import { storageSnapshotForcePaths } from './paths/storage-snapshot-force.js';
import { metricsPath } from './paths/metrics.js';
import { hostInfoPath } from './paths/host-info.js';
import { inFlightReqPath } from './paths/in-flight-req.js';
import { configStatePath } from './paths/config-state.js';
import { loggerPaths } from './paths/loggers.js';
import { monitorPath } from './paths/monitor.js';
import { lockedUserPaths } from './paths/locked-users.js';
import { leasePaths } from './paths/leases.js';
import { quotaPaths } from './paths/quotas.js';
import { outOfScopePaths } from './paths/out-of-scope.js';
import { versionHistoryPath } from './paths/version-history.js';
import { counterPaths } from './paths/counters.js';
import { resultantAclPath } from './paths/resultant-acl.js';
import { featureFlagPaths } from './paths/feature-flags.js';

export function createSystemBackend(services: SystemDeps): FrameworkBackend {
  const migrations = new MountMigrations();
  return new FrameworkBackend({
    description: 'system endpoints used for control, policy and debugging',
    paths: [
      initPath(services),
      unsealPath(services),
      sealStatusPath(services),
      sealBackendStatusPath(services),
      sealPath(services),
      healthPath(services),
      leaderPath(services),
      stepDownPath(services),
      haStatusPath(services),
      keyStatusPath(services),
      rotatePath(services),
      rotateConfigPath(services),
      ...mountTablePaths(services, 'secret'),
      ...mountTablePaths(services, 'auth'),
      remountPath(services, migrations),
      remountStatusPath(services, migrations),
      pluginsReloadPath(services),
      pluginsCatalogPath(services),
      pluginsCatalogTypePath(services),
      pluginsCatalogNamePath(services),
      ...policyPaths(() => services.authz.policies),
      ...passwordPolicyPaths(services),
      ...capabilityPaths(() => services.authz),
      ...auditPaths(() => services.audit),
      ...auditedHeaderPaths(() => services.audit.headers),
      openApiPath((authenticated) => services.openapi(authenticated)),
      internalUiMountListPath(services),
      internalUiMountsPath(services),
      ...wrappingPaths(() => services.wrapping),
      ...toolPaths(),
      rekeyInitPath(services),
      rekeyUpdatePath(services),
      rekeyVerifyPath(services),
      rekeyBackupPath(services),
      rekeyInitPath(services, RECOVERY_KEYS),
      rekeyUpdatePath(services, RECOVERY_KEYS),
      rekeyVerifyPath(services, RECOVERY_KEYS),
      rekeyBackupPath(services, RECOVERY_KEYS),
      generateRootTokenAttemptPath(services),
      generateRootTokenUpdatePath(services),
      generateRootAttemptPath(services),
      generateRootLegacyPath(services),
      generateRootUpdatePath(services),
      decodeTokenPath(),
      ...storageSnapshotPaths(services),
      ...storageSnapshotForcePaths(services),
      metricsPath(services),
      hostInfoPath(services),
      inFlightReqPath(services),
      configStatePath(services),
      configCorsPath(services),
      ...loggerPaths(services),
      monitorPath(services),
      ...lockedUserPaths(services),
      ...leasePaths(services),
      ...quotaPaths(services),
      ...outOfScopePaths(),
      versionHistoryPath(services),
      ...counterPaths(services),
      resultantAclPath(services),
      ...featureFlagPaths(),
    ],
  });
}
