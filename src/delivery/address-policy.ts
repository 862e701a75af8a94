/**
 * Which IP addresses we may connect to for delivery. A recipient domain chooses its MX, so
 * anyone who can send through us can point a domain at 127.0.0.1:25, at a cloud metadata
 * address or at a host on our LAN and make the daemon talk SMTP to it (SSRF). In production
 * every address that is not globally reachable (domain/special-addresses.ts, the IANA
 * special-purpose registries) is refused; tests set delivery.allowPrivate to deliver to MX
 * servers on loopback.
 */
import net from 'node:net';
import { isGloballyReachable } from '../domain/special-addresses.js';

export class AddressPolicy {
  constructor(private readonly opts: { allowPrivate: boolean }) {}

  /** True when delivery may connect to this address. Anything that is not an IP is refused. */
  allows(address: string): boolean {
    if (net.isIP(address) === 0) return false;
    return this.opts.allowPrivate || isGloballyReachable(address);
  }
}
