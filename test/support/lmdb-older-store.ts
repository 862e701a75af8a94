/**
 * Data as an older postrider left it in the LMDB engine, written into a stopped data folder
 * straight through lmdb: the store's verbs write today's layout only, and a test of an upgrade
 * needs yesterday's. The daemon must be stopped (its Store closed) while this runs. Tests reach it
 * through support/engine-fixtures.ts.
 */
import path from 'node:path';
import { open } from 'lmdb';

/**
 * A broadcast record as 0.1 wrote it: no channel index entry, and no `channelBroadcastsIndexed`
 * mark, so the next start backfills the index (store/broadcasts.ts, backfillChannelBroadcasts).
 */
export async function putBroadcastAsOlderVersion(dataDir: string, record: { id: string } & Record<string, unknown>): Promise<void> {
  const root = open({ path: path.join(dataDir, 'db'), maxDbs: 64 });
  try {
    const broadcasts = root.openDB('broadcasts', {});
    const meta = root.openDB('meta', {});
    await root.transaction(() => {
      broadcasts.put(record.id, record);
      meta.remove('channelBroadcastsIndexed');
    });
  } finally {
    await root.close();
  }
}

/**
 * A data folder as the release before the statistics rollup left it (issue 36): no rollup
 * records and no `statsRollupBuilt` mark, so reads take the day and quarter-hour records and
 * the next data upgrade builds the rollup (store/lmdb/stats-rollup-build.ts). `keepRecords`:
 * the records stay, as a build interrupted before its mark leaves them.
 */
export async function dropStatsRollup(dataDir: string, o: { keepRecords?: boolean } = {}): Promise<void> {
  const root = open({ path: path.join(dataDir, 'db'), maxDbs: 64 });
  try {
    const rollup = root.openDB('statsRollup', {});
    const meta = root.openDB('meta', {});
    await root.transaction(() => {
      if (!o.keepRecords) for (const key of rollup.getKeys({})) rollup.remove(key);
      meta.remove('statsRollupBuilt');
    });
  } finally {
    await root.close();
  }
}

/**
 * A data folder as the release before the domain index of enabled inbound routes left it: no
 * ['e', …] entries in inboundRouteIndex and no `inboundRoutesEnabledIndexed` mark, so the next
 * data upgrade adds them (store/lmdb/inbound-routes.ts indexEnabledRoutes).
 */
export async function dropEnabledRouteIndex(dataDir: string): Promise<void> {
  const root = open({ path: path.join(dataDir, 'db'), maxDbs: 64 });
  try {
    const index = root.openDB('inboundRouteIndex', {});
    const meta = root.openDB('meta', {});
    await root.transaction(() => {
      for (const key of index.getKeys({ start: ['e'], end: ['e', '\uffff'] })) index.remove(key);
      meta.remove('inboundRoutesEnabledIndexed');
    });
  } finally {
    await root.close();
  }
}
