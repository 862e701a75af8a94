/**
 * The event log and the reads over it (activity pages and counts, message details) and the statistics counters.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */

export interface EventsPort {}

export interface StatisticsPort {}
