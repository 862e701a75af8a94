/**
 * InboundMessageService (src/inbound/messages.ts) over a store of one message: what a sender's
 * attachment headers can make the attachment link answer, and the retry's rules.
 */
import { describe, expect, it } from 'vitest';
import { receivedMessage, type InboundMessage } from '../../src/domain/inbound-message.js';
import type { Principal } from '../../src/domain/types.js';
import { attachmentAt } from '../../src/inbound/attachment-at.js';
import { InboundMessageService } from '../../src/inbound/messages.js';
import type { StorePort } from '../../src/store/port/index.js';

const ACCOUNT = '11111111-1111-4111-8111-111111111111';
const CHANNEL = '22222222-2222-4222-8222-222222222222';
const ID = '33333333-3333-4333-8333-333333333333';
const accountKey: Principal = { keyId: 'k1', accountId: ACCOUNT, channelId: null };
const channelKey: Principal = { keyId: 'k2', accountId: ACCOUNT, channelId: CHANNEL };

function part(headers: string[], body: string): string[] {
  return ['--b', ...headers, '', body];
}

const RAW = Buffer.from(
  [
    'From: ann@example.org',
    'Subject: parts',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    ...part(['Content-Type: text/plain'], 'body'),
    ...part(['Content-Type: application/pdf', 'Content-Disposition: attachment; filename="../../etc/passwd"'], 'first'),
    ...part(['Content-Type: foo', 'Content-Disposition: attachment; filename="odd.bin"'], 'second'),
    '--b--',
    '',
  ].join('\r\n'),
);

function service(status: InboundMessage['status'], calls: { due: number } = { due: 0 }, channelDeleted = false) {
  let m: InboundMessage = {
    ...receivedMessage(
      { routeId: ID, accountId: ACCOUNT, channelId: CHANNEL, envelope: { mailFrom: '', rcptTo: ['a@b.test'] }, clientAddress: '127.0.0.1', helo: 'x', mailboxHash: null, from: null, subject: null },
      { id: ID, receivedAt: new Date(0), size: RAW.length },
    ),
    status,
  };
  const inboundMessages = {
    get: async (id: string) => (id === ID ? m : undefined),
    raw: async (id: string) => (id === ID ? RAW : undefined),
    requeue: async (_id: string, nowMs: number) => (m = { ...m, status: 'received', nextAttemptAt: new Date(nowMs).toISOString() }),
  };
  const channels = { isDeleted: async (id: string) => channelDeleted && id === CHANNEL };
  const store = { inboundMessages, channels } as unknown as Pick<StorePort, 'inboundMessages' | 'channels'>;
  // The attachment read in this thread: the daemon's runs the same function in the worker pool.
  return new InboundMessageService({ store, attachmentAt: ({ raw, index }) => attachmentAt(raw, index), now: () => 5_000, onDue: () => calls.due++ });
}

describe('the attachment link', () => {
  it('serves a file name without directories and the type the sender gave', async () => {
    const a = await service('posted').attachment(accountKey, ID, 0);
    expect(a).toEqual({ filename: 'passwd', contentType: 'application/pdf', content: Buffer.from('first') });
  });

  it('serves a type that is not type/subtype as application/octet-stream', async () => {
    expect((await service('posted').attachment(channelKey, ID, 1)).contentType).toBe('application/octet-stream');
  });

  it('answers 404 not_found for an index with no attachment', async () => {
    await expect(service('posted').attachment(accountKey, ID, 2)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('answers 403 to another account and to a key of another channel', async () => {
    await expect(service('posted').attachment({ ...accountKey, accountId: CHANNEL }, ID, 0)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(service('posted').attachment({ ...channelKey, channelId: ACCOUNT }, ID, 0)).rejects.toMatchObject({ code: 'forbidden' });
  });
});

describe('a message of a deleted channel', () => {
  it('is 404 not_found in every verb from the delete on, before its purge removed it', async () => {
    const gone = service('failed', { due: 0 }, true);
    await expect(gone.visibleTo(accountKey, ID)).rejects.toMatchObject({ code: 'not_found' });
    await expect(gone.raw(accountKey, ID)).rejects.toMatchObject({ code: 'not_found' });
    await expect(gone.attachment(accountKey, ID, 0)).rejects.toMatchObject({ code: 'not_found' });
    await expect(gone.retry(accountKey, ID)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('the retry', () => {
  it('makes a failed message received and due now, and wakes the poster', async () => {
    const calls = { due: 0 };
    expect(await service('failed', calls).retry(accountKey, ID)).toMatchObject({ status: 'received', nextAttemptAt: new Date(5_000).toISOString() });
    expect(calls.due).toBe(1);
  });

  it('answers 409 conflict for a posted and a received message, without waking anything', async () => {
    const calls = { due: 0 };
    await expect(service('posted', calls).retry(accountKey, ID)).rejects.toMatchObject({ code: 'conflict' });
    await expect(service('received', calls).retry(accountKey, ID)).rejects.toMatchObject({ code: 'conflict' });
    expect(calls.due).toBe(0);
  });

  it('needs an account-level key, after the message is found visible', async () => {
    await expect(service('failed').retry(channelKey, ID)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(service('failed').retry(channelKey, CHANNEL)).rejects.toMatchObject({ code: 'not_found' });
  });
});
