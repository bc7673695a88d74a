import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    // A PostgreSQL for the Postgres cases: EFFECT_SAGA_PG_URL's, or one started for the run.
    globalSetup: ["test/support/postgres-server.ts"],
    // A failure's stack that holds no call site is left out: vitest's reporter could spin on it for ever.
    setupFiles: ["test/support/reportable-failures.ts"],
    // The JSON report is where .ci/run reads the runner's own pass/fail counts.
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]]
  }
})
