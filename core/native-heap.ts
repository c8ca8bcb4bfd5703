/**
 * Hands the C allocator's free memory back to the system: glibc's `malloc_trim(0)`, called through
 * koffi (an FFI library that ships prebuilt binaries, an optional dependency), since Node has no
 * binding of its own for it.
 *
 * Why it is needed (docs/deployment.md, "Memory"): the buffers a burst of requests used (bodies,
 * answers, ArrayBuffers' backing stores) are malloc'd from glibc's main heap, and once they are
 * freed glibc keeps the pages: it gives back on its own only the free space at the heap's top, and a
 * heap a burst left with a few live chunks here and there has no free top to speak of. Measured
 * once quiet after batch encryption, 68–82 MB of a worker's resident set was such freed heap.
 * `malloc_trim(0)` also releases the free pages inside the heap (`madvise(MADV_DONTNEED)`); the
 * malloc(3) environment settings that come closest instead cost a quarter of the batch throughput
 * (README, Performance).
 *
 * Elsewhere (musl, macOS, Windows, or koffi not installed) there is no such call, and this gives
 * undefined: the caller goes without.
 */
import { createRequire } from 'node:module';

/** Returns freed heap pages to the system; true when glibc released any. */
export type HeapTrim = () => boolean;

let loaded: HeapTrim | null | undefined;

/** glibc's `malloc_trim(0)`, bound once; undefined where the process has no glibc or no koffi. */
export function nativeHeapTrim(): HeapTrim | undefined {
  if (loaded === undefined) loaded = bind();
  return loaded ?? undefined;
}

function bind(): HeapTrim | null {
  if (process.platform !== 'linux') return null;
  try {
    // koffi is optional: a platform without its prebuilt binary installs without it.
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    // The C library this process already has mapped: loading it again only opens a handle.
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as (pad: number) => number;
    return () => trim(0) === 1;
  } catch {
    // musl has no libc.so.6 nor malloc_trim.
    return null;
  }
}
