/**
 * delivery.shaping (issue 35): the operator's automatic shaping rules and the built-in ones
 * turned off, read from a file and the environment; a bad pattern, an unknown provider or an
 * unknown rule id stops the start with the rule named.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-shaping-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function load(delivery: unknown, env: NodeJS.ProcessEnv = {}) {
  const file = path.join(dir, 'postrider.jsonc');
  fs.writeFileSync(file, JSON.stringify({ hostname: 'mta.example.com', delivery }));
  return loadConfig({ configPath: file, env });
}

const RULE = { id: 'orange-rl', suffixes: ['orange.fr'], match: 'OFR004_104', action: 'ceiling', concurrency: 1, perSecond: 1, duration: '30m' };

describe('delivery.shaping', () => {
  it('has no rules of its own and disables nothing by default', () => {
    expect(load({}).delivery.shaping).toEqual({ rules: [], disable: [] });
  });

  it('reads rules and disabled ids from the file and from the environment', () => {
    expect(load({ shaping: { rules: [RULE], disable: ['google-unsolicited-rate'] } }).delivery.shaping).toEqual({ rules: [RULE], disable: ['google-unsolicited-rate'] });
    const env = { POSTRIDER_DELIVERY_SHAPING_RULES: JSON.stringify([RULE]), POSTRIDER_DELIVERY_SHAPING_DISABLE: 'yahoo-tss04,yahoo-ts03' };
    expect(load({}, env).delivery.shaping).toEqual({ rules: [RULE], disable: ['yahoo-tss04', 'yahoo-ts03'] });
  });

  it('names a bad pattern, an unknown provider and an unknown built-in id in one error', () => {
    const bad = { shaping: { rules: [{ ...RULE, match: '(x+)+y' }, { ...RULE, id: 'other', provider: 'hotmail' }], disable: ['yahoo'] } };
    let problems: string[] = [];
    try {
      load(bad);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.problems;
    }
    expect(problems.join('\n')).toMatch(/\("orange-rl"\): "match": a repeated group/);
    expect(problems.join('\n')).toMatch(/\("other"\): unknown provider "hotmail"/);
    expect(problems.join('\n')).toMatch(/"yahoo" is no built-in rule/);
  });

  it('refuses a rule with an unknown field or action', () => {
    expect(() => load({ shaping: { rules: [{ ...RULE, action: 'pause' }] } })).toThrow(ConfigError);
    expect(() => load({ shaping: { rules: [{ ...RULE, regex: 'x' }] } })).toThrow(ConfigError);
  });
});
