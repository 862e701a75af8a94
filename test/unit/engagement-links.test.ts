import { describe, expect, it } from 'vitest';
import { MAX_URL_LENGTH } from '../../src/domain/request-target.js';
import { MAX_TRACKED_LINKS, trackHtml } from '../../src/workers/engagement.js';

const ENGAGEMENT = {
  baseUrl: 'https://links.shop-mail.net',
  secret: '11'.repeat(32),
  messageId: '00000000-0000-4000-8000-000000000000',
  channelId: '00000000-0000-4000-8000-000000000001',
  recipient: 'ann@inbox-mail.net',
  opens: false,
  links: true,
};

describe('click tracking', () => {
  it(`rewrites the first ${MAX_TRACKED_LINKS} web links of a message and leaves the rest as written`, () => {
    const html = Array.from({ length: MAX_TRACKED_LINKS + 3 }, (_, i) => `<a href="https://shop.net/p/${i}">${i}</a>`).join('\n');
    const out = trackHtml(html, ENGAGEMENT);
    expect(out.split('https://links.shop-mail.net/t/click?token=').length - 1).toBe(MAX_TRACKED_LINKS);
    expect(out).toContain(`<a href="https://shop.net/p/${MAX_TRACKED_LINKS}">`);
    expect(out).toContain(`<a href="https://shop.net/p/${MAX_TRACKED_LINKS + 2}">`);
    expect(out).not.toContain(`<a href="https://shop.net/p/${MAX_TRACKED_LINKS - 1}">`);
  });

  it('counts only the links it rewrites: mailto: and anchors do not use up the cap', () => {
    const html = `${'<a href="mailto:a@shop.net">m</a><a href="#top">t</a>'.repeat(MAX_TRACKED_LINKS)}<a href="https://shop.net/last">l</a>`;
    expect(trackHtml(html, ENGAGEMENT)).not.toContain('href="https://shop.net/last"');
  });

  it('leaves a link as written when its tracking URL would be longer than the HTTP listener serves', () => {
    // 14,000 characters: a browser opens it; its tracking URL (the link in a token, a third longer) would be a 414.
    const long = `https://shop.net/p?q=${'a'.repeat(14_000)}`;
    const short = 'https://shop.net/p?q=1';
    const out = trackHtml(`<a href="${long}">l</a><a href="${short}">s</a>`, ENGAGEMENT);
    expect(out).toContain(`<a href="${long}">l</a>`);
    const links = [...out.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    expect(links[1]).toMatch(/^https:\/\/links\.shop-mail\.net\/t\/click\?token=/);
    expect(links.every((l) => l.length <= MAX_URL_LENGTH)).toBe(true);
  });
});
