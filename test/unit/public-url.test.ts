import { describe, expect, it } from 'vitest';
import { PublicUrl, derivedPublicUrl } from '../../src/domain/public-url.js';

describe('effective publicUrl', () => {
  it('keeps an explicit publicUrl as configured, whatever port the API bound', () => {
    const u = new PublicUrl({ configured: 'https://mail.example.com/base', http: { host: '127.0.0.1', port: 8080 }, hostname: 'mx.example.com', boundPort: () => 34117 });
    expect(u.explicit).toBe(true);
    expect(u.value).toBe('https://mail.example.com/base');
  });

  it('follows the bound port when publicUrl is not set, and http.port before the listener bound', () => {
    let bound = 0;
    const u = new PublicUrl({ configured: '', http: { host: '127.0.0.1', port: 34117 }, hostname: 'mx.example.com', boundPort: () => bound });
    expect(u.explicit).toBe(false);
    expect(u.value).toBe('http://127.0.0.1:34117');
    bound = 40001;
    expect(u.value).toBe('http://127.0.0.1:40001');
  });

  it('uses hostname for a wildcard http.host, brackets IPv6 literals and leaves out port 80', () => {
    expect(derivedPublicUrl('0.0.0.0', 8080, 'mx.example.com')).toBe('http://mx.example.com:8080');
    expect(derivedPublicUrl('::', 8080, 'mx.example.com')).toBe('http://mx.example.com:8080');
    expect(derivedPublicUrl('::1', 8080, 'mx.example.com')).toBe('http://[::1]:8080');
    expect(derivedPublicUrl('Links.Example.com', 80, 'mx.example.com')).toBe('http://links.example.com');
  });
});
