/**
 * Bounded waiting for shutdown paths (the dispatchers' grace periods, the store's last flush):
 * true once p settles, fulfilled or rejected, false when ms passed first. The timer is cleared
 * either way, so a settled wait leaves nothing behind.
 */
export async function settledWithin(p: PromiseLike<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([Promise.resolve(p).then(() => true as const, () => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
