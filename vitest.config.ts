import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    // The JSON report is where .ci/run reads the runner's own pass/fail counts.
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]]
  }
})
