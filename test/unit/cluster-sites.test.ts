/**
 * delivery/cluster-sites.ts over the single-process slots (coordination/slots.ts, the same
 * contract as the PostgreSQL ones: test/store-contract/coordination-limits.contract.test.ts):
 * a hold given back is kept for the node's next attempt to the site for SPARE_MS, then
 * released; close() releases spares at once; an attempt waits while the site is full and gets
 * the hold another gives back; a wait ends (null) when its signal aborts; a hold moves to another
 * key (the site learned after it was taken) only once that key has room. The cross-node case
 * runs on PostgreSQL in test/cluster/site-concurrency.pg.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { LocalSlots } from '../../src/coordination/slots.js';
import type { SlotHold, Slots } from '../../src/coordination/port.js';
import { ClusterSites } from '../../src/delivery/cluster-sites.js';
import { silentLogger } from '../support/delivery.js';
import { waitFor } from '../support/wait.js';

function countingSlots(): Slots & { acquires: number; local: LocalSlots } {
  const local = new LocalSlots();
  const s = {
    acquires: 0,
    local,
    acquire(key: string, limit: number): Promise<SlotHold | null> {
      s.acquires++;
      return local.acquire(key, limit);
    },
    held: (key: string) => local.held(key),
  };
  return s;
}

const live = () => new AbortController().signal;

describe('ClusterSites', () => {
  it('reuses a hold given back for the next attempt to the site, and releases it after SPARE_MS', async () => {
    const slots = countingSlots();
    const sites = new ClusterSites(slots, silentLogger());
    const first = await sites.hold('site', () => 2, live());
    expect(first).not.toBeNull();
    sites.release(first!);
    const second = await sites.hold('site', () => 2, live());
    expect(second).toBe(first);
    expect(slots.acquires).toBe(1);
    sites.release(second!);
    await waitFor(() => slots.local.count('site') === 0, { what: 'the spare released' });
    await sites.close();
  });

  it('gives spares back at once on close', async () => {
    const slots = countingSlots();
    const sites = new ClusterSites(slots, silentLogger());
    sites.release((await sites.hold('site', () => 1, live()))!);
    expect(slots.local.count('site')).toBe(1);
    await sites.close();
    expect(slots.local.count('site')).toBe(0);
  });

  it('waits while the site is full elsewhere, gets a hold once one frees, and stops waiting when aborted', async () => {
    const slots = countingSlots();
    const other = slots.local.tryAcquire('site', 1)!; // another node's session
    const sites = new ClusterSites(slots, silentLogger());
    const waiting = sites.hold('site', () => 1, live());
    await waitFor(() => slots.acquires >= 2, { what: 'a refused try and a second one' });
    await other.release();
    const hold = await waiting;
    expect(hold).not.toBeNull();
    const abort = new AbortController();
    const blocked = sites.hold('site', () => 1, abort.signal);
    await waitFor(() => slots.acquires >= 4, { what: 'the second waiter refused' });
    abort.abort();
    expect(await blocked).toBeNull();
    await hold!.release();
    await sites.close();
  });

  it("moves a hold taken under the domain's name to the site's key: both held until the site has room, then the first given back", async () => {
    const slots = countingSlots();
    const other = slots.local.tryAcquire('site', 1)!; // another node holds the site's limit
    const sites = new ClusterSites(slots, silentLogger());
    const probe = (await sites.hold('domain.example', () => 1, live()))!;
    expect(await sites.moveHold(probe, 'domain.example', () => 1, live())).toBe(probe);
    const moving = sites.moveHold(probe, 'site', () => 1, live());
    await waitFor(() => slots.acquires >= 3, { what: 'the move refused while the site is full' });
    expect(slots.local.count('domain.example')).toBe(1);
    await other.release();
    const moved = (await moving)!;
    expect(moved.key).toBe('site');
    expect(slots.local.count('site')).toBe(1);
    // The first hold is a spare for SPARE_MS, then given back.
    await waitFor(() => slots.local.count('domain.example') === 0, { what: "the domain's hold given back" });
    const abort = new AbortController();
    const again = (await sites.hold('domain.example', () => 1, live()))!;
    const blocked = sites.moveHold(again, 'site', () => 1, abort.signal);
    abort.abort();
    expect(await blocked).toBeNull();
    expect(slots.local.count('domain.example')).toBe(1);
    await again.release();
    await moved.release();
    await sites.close();
  });
});
