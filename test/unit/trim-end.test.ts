/**
 * trimEndOf and the callers that used `/[…]+$/` before issue 29 (an attachment's file name, the
 * link base URLs, the httpUrl config refiner, a webhook host's trailing dots), on the runs that
 * made those expressions quadratic, at sizes where the old expressions still finish: the results
 * must be what the expressions gave (their time at the callers' limits is
 * test/worst-case/regex.worst.ts's business).
 */
import { describe, expect, it } from 'vitest';
import { refineValue } from '../../src/config/refine.js';
import { AppError, FieldErrorList } from '../../src/domain/errors.js';
import { linkBaseUrl } from '../../src/domain/link-hosts.js';
import { normalizeAttachments } from '../../src/domain/send-rules.js';
import { trimEndOf } from '../../src/domain/trim-end.js';
import { WebhookTargets } from '../../src/webhooks/targets.js';

// Small enough for the old expressions (quadratic on these runs) to answer at once under load.
const slashes = '/'.repeat(2_000);

describe('trimEndOf', () => {
  it('removes the run of the given characters at the end, as /[…]+$/ did', () => {
    for (const s of ['', '/', '///', 'a', 'a/', 'a//', '/a', `${slashes}a`, `a${slashes}`, `${slashes}a${slashes}`, `${slashes}\0/`]) {
      expect(trimEndOf(s, '/'), JSON.stringify(s.slice(0, 20))).toBe(s.replace(/\/+$/, ''));
    }
    expect(trimEndOf('a.exe. . .', '. ')).toBe('a.exe');
    expect(trimEndOf(`a${' .'.repeat(1_000)}x. `, '. ')).toBe(`a${' .'.repeat(1_000)}x`);
  });
});

/** The field errors normalizeAttachments reports for one attachment named `fileName`. */
function fileNameErrors(fileName: string): unknown {
  const errors = new FieldErrorList();
  normalizeAttachments([{ content: 'YQ==', fileName }], '/attachments', errors);
  try {
    errors.throwIfAny();
    return undefined;
  } catch (err) {
    return (err as AppError).errors?.['/attachments/0/fileName']?.map((e) => e.code);
  }
}

describe('an attachment file name as Windows saves it (trailing dots and spaces dropped)', () => {
  it('blocks an executable extension behind a long run of dots and spaces, and passes one inside the name', () => {
    expect(fileNameErrors('a.exe. ')).toEqual(['blocked_type']);
    expect(fileNameErrors(`a.exe${'. '.repeat(50_000)}`)).toEqual(['blocked_type']);
    expect(fileNameErrors(`a.exe${'. '.repeat(50_000)}txt`)).toBeUndefined();
    expect(fileNameErrors(`${' '.repeat(100_000)}report.pdf`)).toBeUndefined();
  });
});

describe('base URLs without trailing slashes', () => {
  it('linkBaseUrl trims publicUrl and the link host URL, also after a long run of slashes inside the path', () => {
    expect(linkBaseUrl('https://e.com/app//', undefined, 'tracking')).toBe('https://e.com/app');
    expect(linkBaseUrl(`https://e.com/a${slashes}b`, undefined, 'tracking')).toBe(`https://e.com/a${slashes}b`);
    const domain = { linkHosts: { tracking: { host: 'track.x.com', value: 'e.com', status: 'verified' as const } } } as Parameters<typeof linkBaseUrl>[1];
    expect(linkBaseUrl(`https://e.com/a${slashes}b${slashes}`, domain, 'tracking')).toBe(`https://track.x.com/a${slashes}b`);
  });

  it('the httpUrl config refiner does the same', () => {
    expect(refineValue('httpUrl', 'https://e.com///')).toBe('https://e.com');
    expect(refineValue('httpUrl', `https://e.com/a${slashes}b${slashes}`)).toBe(`https://e.com/a${slashes}b`);
  });
});

describe('a webhook host under localhost, written with trailing dots', () => {
  const targets = new WebhookTargets({ allowHttp: true, allowPrivate: false });

  it('is loopback with any number of trailing dots, and a run of dots inside the name does not change that', async () => {
    for (const host of ['localhost', 'localhost...', 'a.localhost.', `${'.'.repeat(100_000)}x.localhost${'.'.repeat(10)}`]) {
      const r = await targets.resolve(host);
      expect(r.ok ? 'resolved' : r.kind, host.slice(0, 20)).toBe('refused');
    }
  });
});
