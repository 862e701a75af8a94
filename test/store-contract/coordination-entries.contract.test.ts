/**
 * The coordination port's contract, part three: expiring entries (port.ts, ExpiringEntries),
 * what automatic shaping shares between the nodes of a cluster. Written once, run per
 * implementation (coordinations.ts). Expiries are the caller's wall-clock times, so the tests
 * pass `now` and move no clock.
 */
import { expect, it } from 'vitest';
import { eachCoordination } from './coordinations.js';

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
const HOUR = 3_600_000;

eachCoordination('coordination: expiring entries', (ctx) => {
  it('shows an entry set on one node to every node until it expires', async () => {
    const [a, b, c] = ctx.nodes(3).map((n) => n.entries('shaping'));
    await a!.set('ip1\nprovider:yahoo', '{"rule":"yahoo-tss04"}', T0 + 2 * HOUR);
    for (const node of [a!, b!, c!]) {
      expect(await node.list(T0)).toEqual([{ key: 'ip1\nprovider:yahoo', value: '{"rule":"yahoo-tss04"}', until: T0 + 2 * HOUR }]);
    }
    expect(await b!.list(T0 + 2 * HOUR - 1)).toHaveLength(1);
    expect(await b!.list(T0 + 2 * HOUR)).toEqual([]);
  });

  it('replaces an entry set again (a later expiry extends it), never keeps two', async () => {
    const [a, b] = ctx.nodes(2).map((n) => n.entries('shaping'));
    await a!.set('k', 'first', T0 + HOUR);
    await b!.set('k', 'second', T0 + 3 * HOUR);
    expect(await a!.list(T0 + 2 * HOUR)).toEqual([{ key: 'k', value: 'second', until: T0 + 3 * HOUR }]);
  });

  it('deletes an entry for every node, and says whether there was one', async () => {
    const [a, b] = ctx.nodes(2).map((n) => n.entries('shaping'));
    await a!.set('k', 'v', T0 + HOUR);
    await a!.set('other', 'v', T0 + HOUR);
    expect(await b!.delete('k', T0)).toBe(true);
    expect((await a!.list(T0)).map((e) => e.key)).toEqual(['other']);
    expect(await b!.delete('k', T0)).toBe(false);
    expect(await b!.delete('never', T0)).toBe(false);
    // An expired entry is no entry to delete.
    expect(await a!.delete('other', T0 + HOUR)).toBe(false);
  });

  it('keeps the entries of two names apart', async () => {
    const node = ctx.node;
    await node.entries('shaping').set('k', 'a', T0 + HOUR);
    await node.entries('other').set('k', 'b', T0 + HOUR);
    expect(await node.entries('shaping').list(T0)).toEqual([{ key: 'k', value: 'a', until: T0 + HOUR }]);
    expect(await node.entries('other').list(T0)).toEqual([{ key: 'k', value: 'b', until: T0 + HOUR }]);
  });
});
