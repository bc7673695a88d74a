/**
 * A stuck saga (started with `Saga.run`, and no worker drives it: running or compensating with no
 * live lease, or suspended) as the HTTP API and the console show it: `stuck: true` and
 * `needsHuman: true`, listed by `needsHuman=true`, flagged on the console's list and saga page,
 * exactly where `effect-saga list` says it is stuck.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Journal, Saga } from "../src/index.js"
import * as SagaApi from "../src/SagaApi.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { unescaped } from "./fixtures/console-forms.js"
import { saga, started } from "./fixtures/drafts.js"
import { clientAs, consoleCookie, freshDb, onDb, payout, serveOn } from "./fixtures/http-saga.js"

const intent = {
  stepId: "reserveFunds:c0ffee#1",
  toolName: "reserveFunds",
  phase: "INTENT" as const,
  input: '{"amount":1}',
  payload: null
}

const suspended = saga("SAGA_SUSPENDED")

const definition = JSON.stringify({ definition: "payout", input: {} })

/**
 * A store with: `x-stuck` (Saga.run, running, no lease), `x-suspended` (Saga.run, suspended by a
 * shutdown), `x-between` (from a definition, running, no lease: a Recovery takes it), `x-driven`
 * (Saga.run, running, a live lease) and `payout-1` (awaiting approval); served.
 */
const world = (name: string) =>
  Effect.gen(function* () {
    const db = freshDb(name)
    yield* onDb(db, Saga.run("payout-1", payout))
    yield* onDb(
      db,
      Effect.flatMap(Journal.Journal, (journal) =>
        Effect.all([
          journal.append("x-stuck", Journal.empty, [started(null), intent]),
          journal.append("x-suspended", Journal.empty, [started(null), suspended]),
          journal.append("x-between", Journal.empty, [started(definition), intent]),
          journal.append("x-driven", Journal.empty, [started(null), intent], { owner: "w-1", ttlMillis: 3_600_000 })
        ])
      )
    )
    return { db, baseUrl: yield* serveOn(db) }
  })

const page = (baseUrl: string, urlParams: SagaApi.ListParams) =>
  Effect.flatMap(clientAs(baseUrl, "alice"), (api) => api.sagas.list({ urlParams }))

const html = (baseUrl: string, path: string) =>
  Effect.promise(async () => {
    const cookie = await consoleCookie(baseUrl)
    const response = await fetch(`${baseUrl}${path}`, { headers: { cookie } })
    return response.text()
  })

describe("a stuck saga on the HTTP API and the console", { timeout: 30_000 }, () => {
  it.scopedLive(
    "GET /api/sagas marks stuck exactly the sagas effect-saga list says are stuck, and they need a human",
    () =>
      Effect.gen(function* () {
        const { baseUrl, db } = yield* world("stuck-list")
        const all = yield* page(baseUrl, {})
        const flags = Object.fromEntries(all.sagas.map((saga) => [saga.sagaId, [saga.stuck, saga.needsHuman]]))
        expect(flags).toEqual({
          "payout-1": [false, true],
          "x-stuck": [true, true],
          "x-suspended": [true, true],
          "x-between": [false, false],
          "x-driven": [false, false]
        })
        const cli = yield* cliInProcess("list", "--db", db, "--json")
        const cliStuck = (JSON.parse(cli.stdout) as Array<{ sagaId: string; stuck: boolean }>)
          .filter((row) => row.stuck)
          .map((row) => row.sagaId)
        expect(cliStuck.sort()).toEqual(["x-stuck", "x-suspended"])

        const detail = yield* Effect.flatMap(clientAs(baseUrl, "alice"), (api) =>
          Effect.all([api.sagas.get({ path: { sagaId: "x-stuck" } }), api.sagas.get({ path: { sagaId: "x-between" } })])
        )
        expect(detail.map((one) => [one.saga.stuck, one.saga.needsHuman])).toEqual([
          [true, true],
          [false, false]
        ])
      })
  )

  it.scopedLive(
    "needsHuman=true lists the stuck sagas after those a person waits on by status, paged and counted",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* world("stuck-needs-human")
        const human = yield* page(baseUrl, { needsHuman: true })
        expect(human.total).toBe(3)
        expect(human.sagas[0]!.sagaId).toBe("payout-1")
        const stuck = human.sagas.slice(1)
        expect(stuck.map((saga) => saga.sagaId).sort()).toEqual(["x-stuck", "x-suspended"])
        // The most recently updated first, then by id: as the whole list orders them.
        const ordered = [...stuck].sort(
          (a, b) => b.updatedAt.localeCompare(a.updatedAt) || (a.sagaId < b.sagaId ? -1 : 1)
        )
        expect(stuck.map((saga) => saga.sagaId)).toEqual(ordered.map((saga) => saga.sagaId))

        const pages = yield* Effect.forEach([0, 1, 2, 3], (offset) =>
          page(baseUrl, { needsHuman: true, offset, limit: 1 })
        )
        expect(pages.map((one) => one.total)).toEqual([3, 3, 3, 3])
        expect(pages.flatMap((one) => one.sagas.map((saga) => saga.sagaId))).toEqual(
          human.sagas.map((saga) => saga.sagaId)
        )

        const running = yield* page(baseUrl, { needsHuman: true, status: ["running"] })
        expect([running.total, running.sagas.map((saga) => saga.sagaId)]).toEqual([1, ["x-stuck"]])
        const searched = yield* page(baseUrl, { needsHuman: true, search: "susp" })
        expect([searched.total, searched.sagas.map((saga) => saga.sagaId)]).toEqual([1, ["x-suspended"]])
        const approvals = yield* page(baseUrl, { needsHuman: true, awaitingApproval: true })
        expect(approvals.sagas.map((saga) => saga.sagaId)).toEqual(["payout-1"])
      })
  )

  it.scopedLive(
    "the console marks a stuck saga on its list, and its page says no Recovery can take it and what to do",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* world("stuck-console")
        const list = yield* html(baseUrl, "/console/sagas")
        const row = (sagaId: string) => list.split("\n").find((line) => line.includes(`>${sagaId}</a>`)) ?? ""
        expect(row("x-stuck")).toContain('<span class="badge stuck">stuck</span>')
        expect(row("x-suspended")).toContain('<span class="badge stuck">stuck</span>')
        expect(row("x-between")).not.toContain("stuck")
        expect(row("x-driven")).not.toContain("stuck")

        const stuckPage = yield* html(baseUrl, "/console/sagas/x-stuck")
        expect(stuckPage).toContain(
          "Stuck: no worker is driving it, and no Recovery can take it (it was started with Saga.run): run its program again, or compensate it (effect-saga compensate x-stuck --register MODULE --as WHO, or POST /api/sagas/x-stuck/compensate)."
        )
        const betweenPage = yield* html(baseUrl, "/console/sagas/x-between")
        expect(betweenPage).toContain("no worker is driving it")
        expect(betweenPage).not.toContain("no Recovery can take it")
      })
  )

  it.scopedLive(
    "a stuck saga with a step whose outcome is unknown: its banner says to resolve that step before compensating, and how",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* world("stuck-unknown")
        const { saga } = yield* Effect.flatMap(clientAs(baseUrl, "alice"), (api) =>
          api.sagas.get({ path: { sagaId: "x-stuck" } })
        )
        const banner = /<p class="banner" role="alert" id="stuck">([^<]*)<\/p>/.exec(
          yield* html(baseUrl, "/console/sagas/x-stuck")
        )?.[1]
        expect(unescaped(banner ?? "")).toBe(
          `Stuck: no worker is driving it, and no Recovery can take it (it was started with Saga.run): run its program again, or compensate it (effect-saga compensate x-stuck --register MODULE --as WHO, or POST /api/sagas/x-stuck/compensate). Resolve ${intent.stepId} first: its outcome is unknown, and a compensation now cannot undo it and ends the saga compensation failed. Resolve it below ("It was applied" or "It was not applied"), or effect-saga resolve x-stuck ${intent.stepId} --applied --result JSON|--not-applied --as WHO --revision ${saga.revision} --digest ${saga.digest}, or POST /api/sagas/x-stuck/steps/${encodeURIComponent(intent.stepId)}/resolve.`
        )
        // As documented: compensated now, the saga ends compensation_failed with that step not undone.
        const compensated = yield* Effect.flatMap(clientAs(baseUrl, "alice"), (api) =>
          api.operations.compensate({
            path: { sagaId: "x-stuck" },
            payload: { revision: saga.revision, digest: saga.digest }
          })
        )
        expect(compensated.message).toContain("the saga's compensation failed")
        // With nothing to resolve, the banner says nothing of it.
        expect(yield* html(baseUrl, "/console/sagas/x-suspended")).not.toContain("first: its outcome is unknown")
      })
  )

  it("the typed client decodes a row from a server without stuck (before 0.5.0), and the OpenAPI document declares it optional", () => {
    const row = {
      sagaId: "a",
      status: "running",
      revision: 1,
      digest: "d",
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      lease: null,
      tampered: null,
      needsHuman: false
    }
    const decoded = Schema.decodeUnknownSync(SagaApi.SagaSummary)(row)
    expect(decoded.stuck).toBeUndefined()
    expect(Schema.decodeUnknownSync(SagaApi.SagaSummary)({ ...row, stuck: true }).stuck).toBe(true)
    // The OpenAPI document declares it a boolean a row may lack.
    const answer = OpenApi.fromApi(SagaApi.Api).paths["/api/sagas"]?.get?.responses[200]?.content?.["application/json"]
    type Row = { properties: Record<string, { type?: string }>; required: Array<string> }
    const sagaRow = (answer!.schema as unknown as { properties: { sagas: { items: Row } } }).properties.sagas.items
    expect(sagaRow.properties.stuck).toMatchObject({ type: "boolean" })
    expect(sagaRow.required).not.toContain("stuck")
  })
})
