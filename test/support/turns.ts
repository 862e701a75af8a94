/**
 * How many event-loop turns passed while `work` ran: a setImmediate chain counts each turn until
 * the work settles. Work done at once (synchronously, or in microtasks only) counts 0; work cut
 * into parts that each wait for the next turn counts one per wait.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const turn = () => {
    if (!running) return;
    turns++;
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { value: await work(), turns };
  } finally {
    running = false;
  }
}
