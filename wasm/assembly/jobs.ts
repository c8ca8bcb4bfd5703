// A hash job: one message run from an initial chaining state, used by every SHA-2 kernel. HMAC and
// HKDF are expressed as lists of jobs (key pads, inner hash, outer hash), so one multi-buffer
// engine does all the compression work.

/** Bytes per job. */
export const JOB_SIZE: usize = 32;
/** Message bytes still to absorb. */
export const J_MSG: usize = 0;
export const J_LEN: usize = 4;
/** Digest (big-endian bytes) or, for RAW jobs, the chaining state (native u32/u64 words). */
export const J_OUT: usize = 8;
/** Initial chaining state (native words); an IV or a precomputed HMAC pad state. */
export const J_STATE: usize = 12;
/** Bytes already absorbed into J_STATE; counted in the padding's length field. */
export const J_PREFIX: usize = 16;
export const J_FLAGS: usize = 20;
/** Digest bytes to write (SHA-224 and SHA-384 truncate). */
export const J_OUT_LEN: usize = 24;

/** No padding: the message is whole blocks and the output is the raw chaining state (HMAC pads). */
export const JOB_RAW: u32 = 1;

/** Fills one job. */
export function setJob(job: usize, msg: usize, len: u32, out: usize, state: usize, prefix: u32, flags: u32, outLen: u32): void {
  store<u32>(job, <u32>msg, J_MSG);
  store<u32>(job, len, J_LEN);
  store<u32>(job, <u32>out, J_OUT);
  store<u32>(job, <u32>state, J_STATE);
  store<u32>(job, prefix, J_PREFIX);
  store<u32>(job, flags, J_FLAGS);
  store<u32>(job, outLen, J_OUT_LEN);
}
