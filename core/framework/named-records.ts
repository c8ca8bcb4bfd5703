/**
 * The two paths every auth method serves for its named records (roles, users): one record by name
 * (create, read, update, delete, with an existence check so a POST to a new name is `create`) and
 * the listing of the names. The record's fields, how a write applies them, and what a read shows
 * are the method's own; the shape of the two paths is Vault's for each of them, so it is written
 * once here.
 */
import type { FieldSpecs, FieldValues } from './fields.js';
import { definePath, type AnyPathDefinition } from './path.js';
import { listResponse, type LogicalRequest, type LogicalResponse } from './request.js';

export interface NamedRecordPaths<F extends FieldSpecs, E> {
  /** The collection segment: `role` serves `role/:<key>` and `LIST role/`. */
  readonly collection: string;
  /** The field that names the record (`name`, `username`); it must be one of `fields`. */
  readonly key: keyof F & string;
  /** What one record is called in the operations' summaries: "role", "user". */
  readonly noun: string;
  readonly fields: F;
  readonly refusedFields?: Readonly<Record<string, string>>;
  readonly read: (name: string) => Promise<E | undefined>;
  /** The `data` of a read. */
  readonly show: (entry: E) => Record<string, unknown>;
  /** Creates the record or updates the fields the request sends. */
  readonly write: (req: LogicalRequest, input: FieldValues<F>) => Promise<LogicalResponse | null>;
  readonly remove: (name: string) => Promise<void>;
  readonly list: () => Promise<string[]>;
  readonly synopsis: string;
  readonly description: string;
  readonly listing: { readonly summary: string; readonly synopsis: string; readonly description: string };
}

export function namedRecordPaths<const F extends FieldSpecs, E>(spec: NamedRecordPaths<F, E>): AnyPathDefinition[] {
  const nameOf = (input: FieldValues<F>): string => input[spec.key] as string;
  const record = definePath<F>({
    pattern: `${spec.collection}/:${spec.key}`,
    fields: spec.fields,
    ...(spec.refusedFields ? { refusedFields: spec.refusedFields } : {}),
    existenceCheck: async (_req, input) => (await spec.read(nameOf(input))) !== undefined,
    operations: {
      read: {
        summary: `Read a ${spec.noun}.`,
        handler: async (_req, input) => {
          const entry = await spec.read(nameOf(input));
          return entry ? { data: spec.show(entry) } : null;
        },
      },
      create: { summary: `Create a ${spec.noun}.`, handler: (req, input) => spec.write(req, input) },
      update: { summary: `Update a ${spec.noun}; fields not sent keep their values.`, handler: (req, input) => spec.write(req, input) },
      delete: {
        summary: `Delete a ${spec.noun}.`,
        handler: async (_req, input) => {
          await spec.remove(nameOf(input));
          return null;
        },
      },
    },
    synopsis: spec.synopsis,
    description: spec.description,
  });
  const listing = definePath({
    pattern: `${spec.collection}/`,
    fields: {},
    operations: { list: { summary: spec.listing.summary, handler: async () => listResponse(await spec.list()) } },
    synopsis: spec.listing.synopsis,
    description: spec.listing.description,
  });
  return [record, listing];
}
