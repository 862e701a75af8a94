// libmime ships no types; we use its RFC 2047 encoded-word decoder and its structured header
// value parser (RFC 2045 5.1 parameters, with RFC 2231 continuations).
declare module 'libmime' {
  const libmime: {
    decodeWords(value: string): string;
    parseHeaderValue(value: string): { value: string; params: Record<string, string> };
  };
  export default libmime;
}
