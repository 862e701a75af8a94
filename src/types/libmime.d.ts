// libmime ships no types; we use its RFC 2047 encoded-word decoder, its structured header
// value parser (RFC 2045 5.1 parameters, with RFC 2231 continuations) and its header folding
// (the DKIM-Signature field as mailauth folds it).
declare module 'libmime' {
  const libmime: {
    decodeWords(value: string): string;
    parseHeaderValue(value: string): { value: string; params: Record<string, string> };
    /** Folds before whitespace into lines of at most lineLength (76) where it can; CRLF line breaks. */
    foldLines(value: string, lineLength?: number): string;
  };
  export default libmime;
}
