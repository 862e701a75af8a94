import { describe, expect, it } from 'vitest';
import { ConnectionGate, type Admission } from '../../src/smtp/connection-gate.js';
import { clientAddress } from '../../src/smtp/wire-server.js';

function admitted(a: Admission | string): Admission {
  if (typeof a === 'string') throw new Error(`refused: ${a}`);
  return a;
}

describe('SMTP connection admission', () => {
  it('caps connections per address and frees the slot when one closes', () => {
    const gate = new ConnectionGate({ maxConnections: 100, maxConnectionsPerAddress: 2, authenticatedReserve: 0 });
    const a = admitted(gate.open('192.0.2.1'));
    gate.open('192.0.2.1');
    expect(gate.open('192.0.2.1')).toBe('tooManyFromAddress');
    admitted(gate.open('192.0.2.2'));
    gate.close(a.ticket);
    gate.close(a.ticket); // idempotent
    admitted(gate.open('192.0.2.1'));
    expect(gate.counts).toEqual({ total: 3, unauthenticated: 3, addresses: 2 });
  });

  it('keeps the reserve for authenticated sessions and never lets the total pass the cap', () => {
    const gate = new ConnectionGate({ maxConnections: 4, maxConnectionsPerAddress: 10, authenticatedReserve: 2 });
    const first = admitted(gate.open('192.0.2.1'));
    admitted(gate.open('192.0.2.1'));
    expect(gate.open('192.0.2.1')).toBe('listenerFull'); // 2 unauthenticated: the rest is reserved
    gate.authenticated(first.ticket);
    admitted(gate.open('192.0.2.1'));
    expect(gate.counts).toEqual({ total: 3, unauthenticated: 2, addresses: 1 });
    gate.unauthenticatedAgain(first.ticket);
    expect(gate.open('192.0.2.1')).toBe('listenerFull');
  });

  it('lets a newcomer take the oldest unauthenticated session of the address holding the most, when full', () => {
    const gate = new ConnectionGate({ maxConnections: 6, maxConnectionsPerAddress: 10, authenticatedReserve: 2 });
    const flood = [1, 2, 3, 4].map(() => admitted(gate.open('198.51.100.1')));
    expect(gate.open('198.51.100.1')).toBe('listenerFull'); // the flood cannot evict itself
    const newcomer = admitted(gate.open('192.0.2.1'));
    expect(newcomer.evicted).toBe(flood[0].ticket);
    expect(flood[0].ticket.open).toBe(false);
    // Two addresses with one session each more: no eviction between near-equals.
    const other = new ConnectionGate({ maxConnections: 2, maxConnectionsPerAddress: 10, authenticatedReserve: 0 });
    admitted(other.open('198.51.100.1'));
    admitted(other.open('198.51.100.2'));
    expect(other.open('192.0.2.1')).toBe('listenerFull');
    // Authenticated sessions are never evicted.
    const authed = new ConnectionGate({ maxConnections: 2, maxConnectionsPerAddress: 10, authenticatedReserve: 0 });
    for (const t of [admitted(authed.open('198.51.100.1')), admitted(authed.open('198.51.100.1'))]) authed.authenticated(t.ticket);
    expect(authed.open('192.0.2.1')).toBe('listenerFull');
  });

  it('counts IPv4 as is, IPv4-mapped IPv6 as IPv4 and IPv6 by its /64', () => {
    expect(clientAddress('127.0.0.2')).toBe('127.0.0.2');
    expect(clientAddress('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientAddress('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientAddress('2001:DB8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddress('::1')).toBe('0:0:0:0::/64');
    expect(clientAddress('1:2::4:5:6:7:8')).toBe('1:2:0:4::/64');
  });
});
