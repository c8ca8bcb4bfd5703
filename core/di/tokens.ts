/**
 * Every injection token, in one file. Global services live in the root container; each mount gets
 * a child container with its own MountContext, Storage view and Logger.
 */
export const TOKENS = {
  /** Root: the barrier-backed logical storage (`Storage`). */
  Storage: Symbol('Storage'),
  /** Root: the physical store under the barrier (`PhysicalStorage`). */
  PhysicalStorage: Symbol('PhysicalStorage'),
  /** Root: the encrypting barrier (`Barrier`). */
  Barrier: Symbol('Barrier'),
  /** Root: `Clock` (tests replace it to move time). */
  Clock: Symbol('Clock'),
  /** Root and per mount: a pino `Logger` (per mount: bound with the mount path). */
  Logger: Symbol('Logger'),
  /** Root, when configured: the server configuration's `cloud_auth` block (`CloudAuthConfig`). */
  CloudAuthConfig: Symbol('CloudAuthConfig'),
  /** Root: the plugin registry (`PluginRegistry`). */
  PluginRegistry: Symbol('PluginRegistry'),
  /** Root: the WASM crypto core, once loaded. */
  WasmCrypto: Symbol('WasmCrypto'),
  /** Root: the server's `Metrics`, registered only while metrics are collected (transit records its operations). */
  Metrics: Symbol('Metrics'),
  /** Root: the system view plugins read defaults from (`SystemView`). */
  SystemView: Symbol('SystemView'),
  /** Per mount: the mount's `MountContext` (entry, config). */
  MountContext: Symbol('MountContext'),
  /** Per mount: the mount's storage view (`Storage`). */
  MountStorage: Symbol('MountStorage'),
} as const;
