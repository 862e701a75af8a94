/**
 * What the operator must act on before the store can be used: a store that went missing, a
 * damaged data file, a data folder held by another daemon. Each carries one line that says
 * what is wrong, where, and what to do; main.ts prints it (no stack trace) and exits with the
 * code. Part of the store port: any engine raises these (an LMDB folder that lost its file, a
 * database that cannot be reached); kept apart from the engines so the CLI recognises them
 * without loading one.
 */
export type StoreProblemCode =
  | 'store_missing'
  | 'store_damaged'
  | 'data_folder_locked'
  | 'no_store'
  | 'permission_denied'
  /** Cluster mode: PostgreSQL cannot be reached or refuses the login (systemd restarts: it may come back). */
  | 'store_unreachable'
  /** Cluster mode: a newer postrider migrated the database; this node must be upgraded. */
  | 'store_too_new';

/** sysexits.h: EX_DATAERR for a store that needs restoring (systemd does not restart on it,
 *  see systemd/postrider.service), EX_TEMPFAIL while another daemon holds the folder,
 *  EX_NOINPUT for a CLI command pointed at a folder that holds no store, EX_NOPERM when the
 *  user running the command may not open the folder; EX_TEMPFAIL too for a database that cannot
 *  be reached now, EX_CONFIG for a database newer than this postrider. */
const EXIT_CODES: Record<StoreProblemCode, number> = {
  store_missing: 65,
  store_damaged: 65,
  data_folder_locked: 75,
  no_store: 66,
  permission_denied: 77,
  store_unreachable: 75,
  store_too_new: 78,
};

export class StoreProblem extends Error {
  readonly exitCode: number;

  constructor(
    readonly code: StoreProblemCode,
    message: string,
  ) {
    super(message);
    this.name = 'StoreProblem';
    this.exitCode = EXIT_CODES[code];
  }
}

/** The documentation section every store message points to. */
export const RESTORE_HINT = 'restore db/ from a backup (docs/operations.md, "Backup and restore")';
