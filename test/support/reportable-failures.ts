/**
 * Vitest's set-up file for every test file: a failed test's errors reach the reporter without a
 * stack that holds no call site (see frameless-stack.ts), so that a red run ends and prints its counts.
 */
import { beforeEach } from "vitest"
import { withoutFramelessStack } from "./frameless-stack.js"

beforeEach(({ onTestFailed }) => {
  // Runs once the test and its afterEach hooks have failed it, before the result is reported.
  onTestFailed(({ task }) => {
    if (task.result?.errors !== undefined) task.result.errors = task.result.errors.map(withoutFramelessStack)
  })
})
