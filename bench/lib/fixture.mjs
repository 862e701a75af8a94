/**
 * The synthetic population the store benchmarks (activity, messages) write: a seeded random
 * source (mulberry32, so runs are repeatable) and 5 accounts of 10 channels, 50,000 recipients
 * and 12 tags; the first account is the busy one.
 */
import { randomUUID } from 'node:crypto';

export function seededRandom(seed) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { rand, pick: (xs) => xs[Math.floor(rand() * xs.length)] };
}

export function population() {
  return {
    accounts: Array.from({ length: 5 }, () => ({ id: randomUUID(), channels: Array.from({ length: 10 }, () => randomUUID()) })),
    recipients: Array.from({ length: 50_000 }, (_, i) => `user${i}@example${i % 97}.com`),
    tags: ['welcome', 'billing', 'reset', 'digest', 'promo', 'alert', 'invoice', 'receipt', 'survey', 'news', 'vip', 'trial'],
  };
}
