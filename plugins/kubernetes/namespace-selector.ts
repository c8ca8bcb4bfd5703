/**
 * `bound_service_account_namespace_selector`: a Kubernetes label selector (JSON or YAML) of the
 * namespaces whose service accounts may log in. Only `matchLabels` is served, as in Vault; an
 * empty selector selects every namespace, as in Kubernetes.
 */
import { createRequire } from 'node:module';

// yaml is required on the first selector: a server without a Kubernetes login method never loads it.
const require = createRequire(import.meta.url);

/** The labels a namespace must carry; throws with the reason when the selector is not one. */
export function parseSelector(text: string): Record<string, string> {
  let doc: unknown;
  try {
    doc = (require('yaml') as typeof import('yaml')).parse(text);
  } catch (err) {
    throw new Error(`not JSON or YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not an object');
  const { matchLabels, matchExpressions, ...rest } = doc as Record<string, unknown>;
  if (matchExpressions !== undefined) throw new Error('label selector match expressions are not supported');
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new Error(`unknown field "${unknown[0]}"`);
  if (matchLabels === undefined || matchLabels === null) return {};
  if (typeof matchLabels !== 'object' || Array.isArray(matchLabels)) throw new Error('matchLabels is not an object');
  for (const [key, value] of Object.entries(matchLabels)) if (typeof value !== 'string') throw new Error(`the value of label "${key}" is not a string`);
  return matchLabels as Record<string, string>;
}

export function selects(required: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(required).every(([key, value]) => labels[key] === value);
}
