/** POST /suppressions and /suppressions/remove: spec 4.12. */
import type { FastifyInstance } from 'fastify';
import { normalizeEmail } from '../../domain/address.js';
import type { MailType } from '../../domain/types.js';
import { addSuppressionInTxn, removeSuppressionInTxn } from '../../store/suppressions.js';
import { channelFor } from '../auth.js';
import type { HttpContext } from '../server.js';

const body = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId', 'mailType', 'emails'],
  properties: {
    channelId: { type: 'string', maxLength: 64 },
    mailType: { type: 'string', enum: ['transactional', 'broadcast'] },
    emails: { type: 'array', minItems: 1, maxItems: 500, items: { type: 'string', maxLength: 320 } },
  },
} as const;

interface SuppressionBody {
  channelId: string;
  mailType: MailType;
  emails: string[];
}

interface Result {
  email: string;
  success: boolean;
  message: string;
}

export function suppressionRoutes(app: FastifyInstance, { store }: HttpContext): void {
  const handle = (mode: 'add' | 'remove') => async (req: { body: unknown; principal: import('../../domain/types.js').Principal }) => {
    const b = req.body as SuppressionBody;
    const channel = channelFor(store, req.principal, b.channelId);
    const results = await store.write(() =>
      b.emails.map((raw): Result => {
        const n = normalizeEmail(raw.trim());
        if ('problem' in n) return { email: raw, success: false, message: `invalid address: ${n.problem.message}` };
        const key = { channelId: channel.id, mailType: b.mailType, email: n.email };
        if (mode === 'add') {
          const added = addSuppressionInTxn(store, { ...key, reason: 'manual' });
          return { email: n.email.toLowerCase(), success: true, message: added ? 'suppressed' : 'already suppressed' };
        }
        const removed = removeSuppressionInTxn(store, key);
        return { email: n.email.toLowerCase(), success: removed, message: removed ? 'removed' : 'not suppressed' };
      }),
    );
    return { results };
  };
  app.post('/suppressions', { schema: { body } }, handle('add'));
  app.post('/suppressions/remove', { schema: { body } }, handle('remove'));
}
