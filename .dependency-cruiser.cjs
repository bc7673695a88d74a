/**
 * The import rules of src/ (docs/architecture.md says why): no cycle of value imports, and the
 * seams between what runs inside a saga (the engine), what stores, what operates from outside and
 * what tests use. `npm run lint` runs it; `test/architecture.test.ts` shows it fails on a cycle.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-value-cycle",
      comment: "A cycle of value imports works only by luck of evaluation order: break it.",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "store-never-imports-engine",
      comment: "A store knows entries, never programs.",
      severity: "error",
      from: { path: "^src/(internal/(journal|sql)/|(Journal|SqlJournal|SqlApproval|SqlStore|Approval)\\.ts$)" },
      to: { path: "^src/internal/engine/" }
    },
    {
      name: "engine-never-imports-sql",
      comment: "The engine knows the Journal and Approval tags, never a SQL driver.",
      severity: "error",
      from: { path: "^src/internal/engine/" },
      to: {
        path: "(^src/internal/sql/|^src/Sql|node_modules/(@effect/sql|@effect/sql-sqlite-node|@effect/sql-pg|better-sqlite3|pg)/)"
      }
    },
    {
      name: "only-the-cli-entry-imports-the-cli",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(Cli\\.ts$|internal/cli/)" },
      to: { path: "^src/internal/cli/" }
    },
    {
      name: "nothing-imports-testing",
      comment: "Testing is for tests; nothing in src/ depends on it but its own internals.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(Testing\\.ts$|internal/testing/)" },
      to: { path: "^src/Testing\\.ts$" }
    },
    {
      name: "outside-goes-through-public-modules",
      comment:
        "The CLI, the agents and the HTTP API operate from outside, as a user would: through the public modules.",
      severity: "error",
      from: { path: "^src/internal/(cli|ai|http)/" },
      to: { path: "^src/internal/(engine|journal|sql)/" }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports vanish when TypeScript compiles: only value imports can form a cycle that bites.
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" }
  }
}
