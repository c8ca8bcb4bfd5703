/**
 * `sys/ha-status`: the nodes of the cluster as far as this node knows them
 * (https://developer.hashicorp.com/vault/api-docs/system/ha-status). A node without HA storage
 * serves every request itself, so it lists itself as the active node.
 */
import os from 'node:os';
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function haStatusPath(services: SystemDeps) {
  return definePath({
    pattern: 'ha-status',
    fields: {},
    operations: {
      read: {
        summary: 'List the nodes of the HA cluster.',
        handler: async () => {
          const known = services.ha ? await services.ha.knownNodes() : [{ apiAddr: services.apiAddr ?? '', active: true, self: true }];
          const nodes = known.map((node) => ({
            // Only this node's host name is known here; another node is named by its address.
            hostname: node.self ? os.hostname() : '',
            api_address: node.apiAddr,
            // Nodes talk over the API address (there is no separate cluster port).
            cluster_address: node.apiAddr,
            active_node: node.active,
            // Vault's active node has no echo of its own; standbys do not echo to the active node here.
            last_echo: null,
            version: node.self ? services.version : '',
          }));
          return { data: { nodes } };
        },
      },
    },
    synopsis: 'The nodes of the HA cluster.',
    description:
      'Each node with its host name, api_address, cluster_address (the same address: nodes talk over the API) and ' +
      'active_node. A standby lists itself and the active node; an active node, or a node without HA storage, itself.',
  });
}
