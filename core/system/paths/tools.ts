/** `sys/tools/hash(/:algorithm)` and `sys/tools/random(/:source)(/:bytes)`: transit's hash and random tools (core/tools), served without a mount. */
import { hash } from 'node:crypto';
import { hashToolPath } from '../../tools/hash.js';
import { randomToolPaths } from '../../tools/random.js';

export function toolPaths() {
  return [hashToolPath('tools/hash', (algorithm, data) => hash(algorithm, data, 'buffer')), ...randomToolPaths('tools/random')];
}
