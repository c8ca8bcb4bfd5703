/**
 * The C allocator's settings a server needs, through koffi (an FFI library that ships prebuilt
 * binaries, an optional dependency), since Node has no binding of its own for either: glibc's
 * `malloc_trim(0)`, which hands its free memory back to the system, and its mmap threshold
 * (`mapLargeAllocations`, below).
 *
 * Why the trim is needed (docs/deployment.md, "Memory"): the buffers under a megabyte that a burst
 * of requests used (a body's pieces, answers, ArrayBuffers' backing stores) are malloc'd from glibc's
 * main heap, and once they are freed glibc keeps the pages: it gives back on its own only the free
 * space at the heap's top, and a heap a burst left with a few live chunks here and there has no free
 * top to speak of. Measured once quiet after batch encryption, 68–82 MB of a worker's resident set
 * was such freed heap. `malloc_trim(0)` also releases the free pages inside the heap
 * (`madvise(MADV_DONTNEED)`); the malloc(3) environment settings that come closest instead cost a
 * quarter of the batch throughput (README, Performance).
 *
 * Elsewhere (musl, macOS, Windows, or koffi not installed) there are no such calls: the caller goes
 * without.
 */
import { createRequire } from 'node:module';

/** Returns freed heap pages to the system; true when glibc released any. */
export type HeapTrim = () => boolean;

/** The calls this module makes into glibc, bound once; null where there is no glibc or no koffi. */
interface Glibc {
  readonly mallocTrim: (pad: number) => number;
  readonly mallopt: (param: number, value: number) => number;
}

let loaded: Glibc | null | undefined;

function glibc(): Glibc | null {
  if (loaded === undefined) loaded = bind();
  return loaded;
}

/** glibc's `malloc_trim(0)`, bound once; undefined where the process has no glibc or no koffi. */
export function nativeHeapTrim(): HeapTrim | undefined {
  const lib = glibc();
  return lib ? () => lib.mallocTrim(0) === 1 : undefined;
}

/** Allocations of at least this many bytes get a mapping of their own (glibc's mmap threshold). */
export const LARGE_ALLOCATION_BYTES = 1024 * 1024;

/** `M_MMAP_THRESHOLD`, mallopt's parameter for it (glibc's malloc.h). */
const M_MMAP_THRESHOLD = -3;

/**
 * Fixes glibc's mmap threshold at LARGE_ALLOCATION_BYTES, so that a buffer of megabytes (a 30 MB
 * body, its plaintext, its ciphertext) always gets a mapping of its own and is unmapped when freed.
 *
 * By default glibc raises the threshold to the size of each mapped chunk freed, up to 32 MiB, and
 * the threshold for trimming its main heap to twice that
 * (https://man7.org/linux/man-pages/man3/mallopt.3.html, M_MMAP_THRESHOLD). After the first 30 MB
 * buffer is freed the next ones come from the main heap, and freeing one of those leaves tens of
 * megabytes free at the heap's top, which `free` gives back to the system while it holds the main
 * heap's lock. V8 frees Buffers' memory on its helper threads, so the event loop, needing that lock
 * for its next allocation, waited out the whole release (bench/README.md, "Large buffers mapped on
 * their own"). A chunk that has a mapping of its own is unmapped without that lock. Setting the
 * threshold also stops glibc's adjusting of both thresholds: the trim threshold stays at glibc's
 * 128 KiB, so the main heap's free top is given back in small steps as it comes.
 *
 * Returns true when the threshold was set; false where there is no glibc or no koffi, or when the
 * operator set it (`MALLOC_MMAP_THRESHOLD_`, or `glibc.malloc.mmap_threshold` in GLIBC_TUNABLES):
 * glibc has then read theirs at start, and it stands.
 */
export function mapLargeAllocations(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.MALLOC_MMAP_THRESHOLD_ !== undefined || (env.GLIBC_TUNABLES ?? '').includes('glibc.malloc.mmap_threshold')) return false;
  const lib = glibc();
  return lib !== null && lib.mallopt(M_MMAP_THRESHOLD, LARGE_ALLOCATION_BYTES) === 1;
}

function bind(): Glibc | null {
  if (process.platform !== 'linux') return null;
  try {
    // koffi is optional: a platform without its prebuilt binary installs without it.
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    // The C library this process already has mapped: loading it again only opens a handle.
    const libc = koffi.load('libc.so.6');
    return {
      mallocTrim: libc.func('int malloc_trim(size_t pad)') as (pad: number) => number,
      mallopt: libc.func('int mallopt(int param, int value)') as (param: number, value: number) => number,
    };
  } catch {
    // musl has no libc.so.6 nor malloc_trim.
    return null;
  }
}
