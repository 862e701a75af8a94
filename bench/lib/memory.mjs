/**
 * Resident memory of a process from /proc (Linux).
 */
import fs from 'node:fs';

/**
 * Resident set size of a process, its peak (VmHWM), and its two parts, in MB: anonymous memory
 * (heaps, buffers) and file pages, which for the daemon are mostly LMDB's memory map: pages of
 * the data file it has read, counted in RSS but page cache the kernel can take back.
 */
export function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 };
}
