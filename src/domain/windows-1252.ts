/**
 * windows-1252 text from a string that holds one byte per char (as Buffer's 'latin1' reads it):
 * the encoding the WHATWG Encoding standard gives the labels "latin1" and "iso-8859-1", and how
 * browsers and mail readers read text labelled so or sent raw by legacy Western mailers. It agrees
 * with ISO-8859-1 but for 0x80-0x9f, which are letters and punctuation here ("\x80" the euro sign,
 * "\x96" an en dash, "\x92" the apostrophe of Outlook) where ISO-8859-1 has C1 controls.
 *
 * Not Node's TextDecoder('windows-1252'): Node 20.18.3+ and 22.13.0+ decode it as ISO-8859-1
 * (nodejs/node#56542, #60888), which would keep those bytes as controls.
 */

/**
 * WHATWG index-windows-1252 for 0x80-0x9f; 0x81, 0x8d, 0x8f, 0x90 and 0x9d are unassigned in
 * Windows' code page and map to the code point of the same number, as the index says.
 */
const C1 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** `binary` (chars U+0000-U+00FF, one per byte) read as windows-1252; every byte is a character. */
export function windows1252(binary: string): string {
  return binary.replace(/[\x80-\x9f]/g, (c) => C1[c.charCodeAt(0) - 0x80]);
}
