/**
 * What a send request carries besides its body: the principal, and the channel and idempotency
 * headers with the name each came under. The headers have aliases (http/request-headers.ts), and
 * an error about a value names the header as the client sent it: a client that sent
 * X-Helo-Idempotency-Key looks for that name, not for Idempotency-Key.
 */
import type { Principal } from '../domain/types.js';

export interface SenderHeaders {
  principal: Principal;
  channelHeader?: string;
  /** X-Service-Channel-Id or X-Helo-Channel-Id (the first is assumed when absent). */
  channelHeaderName?: string;
  idempotencyKey?: string;
  /** Idempotency-Key, X-Service-Idempotency-Key or X-Helo-Idempotency-Key (the first is assumed when absent). */
  idempotencyHeader?: string;
}
