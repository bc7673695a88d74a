/**
 * The journal and approval conformance suites on PostgreSQL (see fixtures/postgres.ts for when
 * they run).
 */
import { SqlApproval, SqlJournal } from "../src/index.js"
import { suite as approvalSuite } from "./ApprovalSuite.js"
import { describePg, freshDatabase, reachable } from "./fixtures/postgres.js"
import { suite as journalSuite } from "./JournalSuite.js"

const url = reachable ? await freshDatabase("effect_saga_suites") : ""

describePg("PostgreSQL", () => {
  journalSuite("SqlJournal.layerPg", SqlJournal.layerPg({ url }))
  approvalSuite("SqlApproval.layerPg", SqlApproval.layerPg({ url }))
})
