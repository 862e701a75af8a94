/** The signing stage (src/submission/signing.ts) on a real LMDB store, with a stand-in signer. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getBody } from '../../src/store/messages.js';
import { dueJobIds } from '../../src/store/queue.js';
import { awaitsSignature } from '../../src/store/signing.js';
import type { DkimKeyRef, FinishRequest } from '../../src/submission/ports.js';
import { SigningStage } from '../../src/submission/signing.js';
import { jobsOf, openTestStore, queueMessage, silentLogger, type TestStore } from '../support/delivery.js';
import { waitFor } from '../support/wait.js';

const KEY: DkimKeyRef = { domain: 'sender.test', selector: 's1', algorithm: 'ed25519', privateKeyPem: 'not used by the stand-in' };

let t: TestStore;
let stage: SigningStage | undefined;

beforeEach(async () => {
  t = await openTestStore();
});

afterEach(async () => {
  await stage?.stop();
  stage = undefined;
  await t.close();
});

/** A signer that prepends a recognizable field, as the real one prepends DKIM-Signature. */
const fakeSign = async ({ raw, dkim }: { raw: Uint8Array; dkim: DkimKeyRef }) => Buffer.concat([Buffer.from(`DKIM-Signature: s=${dkim.selector}\r\n`), raw]);

/** The pool's finish task with a stand-in signer: these messages were committed raw (nothing to compose). */
const finishWith = (sign: typeof fakeSign) => (inputs: FinishRequest[]) =>
  Promise.allSettled(inputs.map(async (i) => ({ raw: i.dkim ? await sign({ raw: i.raw!, dkim: i.dkim }) : i.raw! })));

function newStage(o: { sign?: typeof fakeSign; key?: DkimKeyRef; onReady?: () => void } = {}): SigningStage {
  stage = new SigningStage({
    store: t.store,
    builder: { finish: finishWith(o.sign ?? fakeSign) },
    domains: { signingKey: () => ('key' in o ? o.key : KEY) },
    logger: silentLogger(),
    onReady: o.onReady,
    retryMs: 10,
  });
  return stage;
}

const signed = (id: string) => waitFor(() => !awaitsSignature(t.store, id), { what: `message ${id} signed` });

describe('SigningStage', () => {
  it('keeps the jobs of a message committed unsigned out of the due queue until its signed body is stored', async () => {
    const onReady = vi.fn();
    const s = newStage({ onReady });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test', 'b@two.test'], signingDomain: 'sender.test' });
    expect(awaitsSignature(t.store, id)).toBe(true);
    expect(dueJobIds(t.store)).toEqual([]);

    s.schedule([id]);
    await signed(id);
    expect(getBody(t.store, id)!.toString()).toMatch(/^DKIM-Signature: s=s1\r\nFrom: /);
    expect(dueJobIds(t.store).sort()).toEqual(jobsOf(t.store, id).map((j) => j.id).sort());
    expect(onReady).toHaveBeenCalled();
  });

  it('signs at start what the last run committed and left unsigned', async () => {
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    await newStage().start();
    await signed(id);
    expect(dueJobIds(t.store)).toEqual(jobsOf(t.store, id).map((j) => j.id));
  });

  it('leaves a message whose signature failed waiting, and tries it again', async () => {
    let calls = 0;
    const flaky = async (input: Parameters<typeof fakeSign>[0]) => {
      if (++calls === 1) throw new Error('worker crashed');
      return fakeSign(input);
    };
    const s = newStage({ sign: flaky });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await signed(id);
    expect(calls).toBe(2);
    expect(getBody(t.store, id)!.toString()).toMatch(/^DKIM-Signature: /);
  });

  it('sends a message unsigned when its domain has no key any more', async () => {
    const s = newStage({ key: undefined });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await signed(id);
    expect(getBody(t.store, id)!.toString()).toMatch(/^From: /);
    expect(dueJobIds(t.store)).toHaveLength(1);
  });

  it('signs each message once when it is scheduled again while being signed', async () => {
    const sign = vi.fn(fakeSign);
    const s = newStage({ sign });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    s.schedule([id]);
    await signed(id);
    await waitFor(() => s.backlog === 0, { what: 'an idle stage' });
    expect(sign).toHaveBeenCalledTimes(1);
    expect(getBody(t.store, id)!.toString().match(/DKIM-Signature/g)).toHaveLength(1);
  });
});
