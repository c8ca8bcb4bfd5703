/** Small helpers shared by the storage tests. */

export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

export const text = (value: Uint8Array | undefined): string | undefined =>
  value === undefined ? undefined : new TextDecoder().decode(value);

/** The error a promise rejects with; fails the test if it resolves. */
export async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`rejected with a non-Error: ${String(err)}`);
  }
  throw new Error('expected a rejection, but the promise resolved');
}
