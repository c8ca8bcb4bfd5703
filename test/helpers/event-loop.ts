/** Watching the event loop from a test: how often it came round while some work was in flight. */

/**
 * Runs `work` and counts the turns of the event loop (setImmediate callbacks, which run once per
 * turn, after I/O) until it settles. Work that never gives the loop back counts none, however
 * long it takes; the count says nothing about time, so tests can assert it.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await work();
    return { result, turns };
  } finally {
    running = false;
  }
}
