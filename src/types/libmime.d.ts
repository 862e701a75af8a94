// libmime ships no types; we use only its RFC 2047 encoded-word decoder.
declare module 'libmime' {
  const libmime: { decodeWords(value: string): string };
  export default libmime;
}
