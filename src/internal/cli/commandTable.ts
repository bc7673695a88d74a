/**
 * The command table: every command of `effect-saga`, in the order `--help` lists them. A command
 * is one module under `commands/` and one entry here.
 *
 * @since 0.1.0
 */
import { approvals } from "./commands/approvals.js"
import { approve } from "./commands/approve.js"
import { compensate } from "./commands/compensate.js"
import { compensateEffect } from "./commands/compensateEffect.js"
import { exportSaga } from "./commands/export.js"
import { importSaga } from "./commands/import.js"
import { list } from "./commands/list.js"
import { prune } from "./commands/prune.js"
import { reject } from "./commands/reject.js"
import { renewApproval } from "./commands/renewApproval.js"
import { resolve } from "./commands/resolve.js"
import { serve } from "./commands/serve.js"
import { show } from "./commands/show.js"
import { verify } from "./commands/verify.js"

/**
 * Every command, reads first, then decisions, then maintenance.
 *
 * @since 0.1.0
 * @category commands
 */
export const commands = [
  list,
  show,
  approvals,
  approve,
  reject,
  renewApproval,
  resolve,
  compensate,
  compensateEffect,
  verify,
  exportSaga,
  importSaga,
  prune,
  serve
] as const
