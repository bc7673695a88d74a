#!/usr/bin/env node
// The operator's command line (list, show, approve, reject, resolve, compensate, verify, export) is
// planned; this entry point is reserved for it so that installs keep the same `bin` name.
console.error(
  "effect-saga: the operator CLI is not part of this version yet; use the Saga and Approval services from code."
)
process.exit(2)
