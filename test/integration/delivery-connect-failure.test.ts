/**
 * How an attempt's result tells a connection that never opened (AttemptResult.connectFailed)
 * and a source address the machine does not have (localError 'address_unavailable', from
 * EADDRNOTAVAIL) from a server's reply: real sockets on loopback, the real SMTP client.
 * 192.0.2.55 is TEST-NET-1 (RFC 5737): never an address of this machine.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverOverSmtp, type SmtpAttemptInput } from '../../src/delivery/smtp-client.js';
import { canBind } from '../../src/delivery/source-health.js';
import { rawMessage, TEST_SMTP_TIMEOUTS } from '../support/delivery.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';

const MX = '127.0.38.2';
const SECOND_MX = '127.0.38.3';
const MISSING = '192.0.2.55';

let mx: MxServer;
let second: MxServer;

beforeAll(async () => {
  mx = await startMxServer({ address: MX, starttls: false });
  second = await startMxServer({ address: SECOND_MX, port: mx.port, starttls: false });
});

afterAll(async () => {
  await Promise.all([mx.close(), second.close()]);
});

function input(o: Partial<SmtpAttemptInput>): SmtpAttemptInput {
  return {
    targets: [{ host: 'mx.example', address: MX }],
    port: mx.port,
    heloName: 'mta.sender.test',
    sender: 'bounce@sender.test',
    recipients: ['a@example.com'],
    body: rawMessage('a@sender.test', ['a@example.com']),
    timeouts: TEST_SMTP_TIMEOUTS,
    ...o,
  };
}

describe('connect failures in the attempt result', () => {
  it('marks a source address that is not on this machine as address_unavailable, deferred, without trying the other targets', async () => {
    const before = mx.connections + second.connections;
    const result = await deliverOverSmtp(
      input({ sourceAddress: MISSING, targets: [{ host: 'mx1.example', address: MX }, { host: 'mx2.example', address: SECOND_MX }] }),
    );
    expect(result.localError).toBe('address_unavailable');
    expect(result.connectFailed).toBe(true);
    expect(result.recipients[0]).toMatchObject({ outcome: 'deferred', phase: 'connect' });
    expect(result.response).toMatch(/EADDRNOTAVAIL/);
    // Every target would fail to bind the same way: the first one's failure ends the attempt.
    expect(result.mx).toBe('mx1.example');
    expect(mx.connections + second.connections).toBe(before);
  });

  it('marks a refused connection as connectFailed with no local error', async () => {
    // A port nothing listens on: listen, note it, close.
    const server = net.createServer().listen(0, '127.0.38.4');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const result = await deliverOverSmtp(input({ targets: [{ host: 'mx.example', address: '127.0.38.4' }], port, sourceAddress: '127.0.0.2' }));
    expect(result.connectFailed).toBe(true);
    expect(result.localError).toBeUndefined();
    expect(result.recipients[0]).toMatchObject({ outcome: 'deferred', phase: 'connect' });
  });

  it('leaves both unset when a server answered, even with a refusal', async () => {
    const ok = await deliverOverSmtp(input({ sourceAddress: '127.0.0.2' }));
    expect(ok.recipients[0].outcome).toBe('delivered');
    expect(ok.connectFailed).toBeUndefined();
    mx.scriptRcpt('b@example.com', { code: 450, message: '4.2.1 mailbox busy' });
    const refused = await deliverOverSmtp(input({ sourceAddress: '127.0.0.2', recipients: ['b@example.com'] }));
    expect(refused.recipients[0]).toMatchObject({ outcome: 'deferred', phase: 'rcpt', smtpCode: 450 });
    expect(refused.connectFailed).toBeUndefined();
    expect(refused.localError).toBeUndefined();
  });

  it('tells an address of this machine from one it lacks by binding it (the health gate\'s probe of a missing address)', async () => {
    expect(await canBind('127.0.0.2')).toBe(true);
    expect(await canBind(MISSING)).toBe(false);
  });
});
