/** The LMDB engine's LmdbSuppressions: the port's verbs over the functions of store/lmdb/. */
import type { MailType, SuppressionRecord } from '../../../domain/types.js';
import type { Store } from '../env.js';
import type { SuppressionsPort } from '../../port/index.js';
import type { SuppressionOp, SuppressionPage, SuppressionPageQuery } from '../../port/suppressions.js';
import { applySuppressions, getSuppression, isSuppressed, listSuppressions, pageSuppressions } from '../suppressions.js';

export class LmdbSuppressions implements SuppressionsPort {
  constructor(private readonly store: Store) {}

  async is(channelId: string, mailType: MailType, email: string): Promise<boolean> {
    return isSuppressed(this.store, channelId, mailType, email);
  }

  async get(channelId: string, mailType: MailType, email: string): Promise<SuppressionRecord | undefined> {
    return getSuppression(this.store, channelId, mailType, email);
  }

  async list(channelId: string, mailType?: MailType): Promise<SuppressionRecord[]> {
    return listSuppressions(this.store, channelId, mailType);
  }

  async page(q: SuppressionPageQuery): Promise<SuppressionPage> {
    return pageSuppressions(this.store, q);
  }

  apply(channelId: string, mailType: MailType, ops: readonly SuppressionOp[]): Promise<boolean[]> {
    return applySuppressions(this.store, channelId, mailType, ops);
  }
}
