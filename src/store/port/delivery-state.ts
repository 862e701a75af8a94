/**
 * State delivery keeps between attempts: TLS-RPT counts and reports, cached MTA-STS policies, hard DNS failure counts per recipient domain.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */

export interface TlsRptPort {}

export interface MtaStsPort {}

export interface DnsFailuresPort {}
