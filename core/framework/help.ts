/** Help text (markdown) and the per-path description shared with OpenAPI generation. */
export interface FieldHelp {
  readonly type: string;
  readonly description: string;
  readonly required: boolean;
  readonly inPath: boolean;
  readonly default?: unknown;
  readonly allowedValues?: readonly string[];
}

export interface PathHelp {
  readonly pattern: string;
  readonly openApiPath: string;
  readonly synopsis: string;
  readonly description: string;
  readonly unauthenticated: boolean;
  readonly sudo: boolean;
  /** A login under the mount's user lockout (PathDefinition.userLockout). */
  readonly userLockout?: boolean;
  readonly createSupported: boolean;
  readonly operations: Readonly<Record<string, { readonly summary: string }>>;
  readonly fields: Readonly<Record<string, FieldHelp>>;
  /** Fields Vault defines here that are refused when set, with the reason. */
  readonly refusedFields: Readonly<Record<string, string>>;
}

export function renderHelp(path: PathHelp): string {
  const lines = [`## ${path.pattern}`, '', path.synopsis, ''];
  if (path.description) lines.push(path.description.trim(), '');
  const ops = Object.entries(path.operations);
  if (ops.length > 0) {
    lines.push('### Operations', '');
    for (const [op, spec] of ops) lines.push(`- **${op}**: ${spec.summary}`);
    lines.push('');
  }
  const fields = Object.entries(path.fields);
  if (fields.length > 0) {
    lines.push('### Parameters', '');
    for (const [name, field] of fields) {
      const notes = [field.type, field.required ? 'required' : undefined, field.inPath ? 'in path' : undefined]
        .filter(Boolean)
        .join(', ');
      const dflt = field.default !== undefined ? ` Default: \`${JSON.stringify(field.default)}\`.` : '';
      const allowed = field.allowedValues ? ` One of: ${field.allowedValues.map((v) => `\`${v}\``).join(', ')}.` : '';
      lines.push(`- \`${name}\` (${notes}): ${field.description}${dflt}${allowed}`);
    }
    lines.push('');
  }
  const refused = Object.entries(path.refusedFields);
  if (refused.length > 0) {
    lines.push('### Refused parameters', '');
    for (const [name, reason] of refused) lines.push(`- \`${name}\`: ${reason}`);
    lines.push('');
  }
  return lines.join('\n');
}
