import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderExampleConfig } from '../../src/config/example.js';
import { loadConfig } from '../../src/config/load.js';
import { SCHEMA } from '../../src/config/schema.js';

describe('config/postrider.example.jsonc', () => {
  it('is exactly what `postrider config example` renders from the schema', () => {
    const committed = fs.readFileSync(new URL('../../config/postrider.example.jsonc', import.meta.url), 'utf8');
    expect(committed).toBe(renderExampleConfig());
  });

  it('documents every key and loads without errors', () => {
    const text = renderExampleConfig();
    for (const def of SCHEMA) expect(text).toContain(`"${def.path.split('.').pop()}"`);
    const file = new URL('../../config/postrider.example.jsonc', import.meta.url);
    expect(() => loadConfig({ configPath: file.pathname, env: {} })).not.toThrow();
  });
});
