/**
 * Failed AUTH attempts per client address in a sliding 10-minute window. Past the limit the
 * listener refuses further attempts from that address (421 4.7.0) without checking the
 * credential, which makes password guessing over SMTP impractical.
 */
export class AuthThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly opts: { limit: number; windowMs?: number; now?: () => number }) {}

  private window(): number {
    return this.opts.windowMs ?? 600_000;
  }

  blocked(ip: string): boolean {
    return this.recent(ip).length >= this.opts.limit;
  }

  fail(ip: string): void {
    const list = this.recent(ip);
    list.push(this.now());
    this.failures.set(ip, list);
    if (this.failures.size > 50_000) this.prune();
  }

  succeed(ip: string): void {
    this.failures.delete(ip);
  }

  private recent(ip: string): number[] {
    const since = this.now() - this.window();
    return (this.failures.get(ip) ?? []).filter((t) => t > since);
  }

  private prune(): void {
    for (const ip of this.failures.keys()) if (this.recent(ip).length === 0) this.failures.delete(ip);
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}
