import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as List from "effect/List"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import { Approval, Compensable, Journal, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("what an undo sees", () => {
  it.effect(
    "a run's own undo runs as its call ran: the program's services, FiberRef values, log annotations and log spans",
    () =>
      Effect.gen(function* () {
        const { charge, seen, logger, logged } = fixture()
        const checkout = (tenant: string) =>
          Effect.gen(function* () {
            yield* charge("order-1")
            yield* refused
          }).pipe(
            Effect.withLogSpan("checkout"),
            Effect.provideService(Tenant, tenant),
            Effect.locally(TenantRef, tenant),
            Effect.annotateLogs("tenant", tenant)
          )
        const result = yield* Saga.run("order-1", checkout("acme")).pipe(
          Effect.annotateLogs("caller", "api"),
          Effect.provide(logger)
        )
        expect(result._tag).toBe("Compensated")
        expect(seen).toEqual([
          {
            at: "charge",
            service: "acme",
            fiberRef: "acme",
            annotations: { caller: "api", tenant: "acme" },
            logSpans: ["checkout"]
          },
          {
            at: "refund",
            service: "acme",
            fiberRef: "acme",
            annotations: { caller: "api", tenant: "acme" },
            logSpans: ["checkout"]
          }
        ])
        expect(logged).toEqual([
          { message: "charge", annotations: { caller: "api", tenant: "acme" } },
          { message: "refund", annotations: { caller: "api", tenant: "acme" } }
        ])
        // The run's caller keeps its own values: nothing of the call's came back with the undo.
        expect(yield* FiberRef.get(TenantRef)).toBe("default-tenant")
        expect(HashMap.size(yield* FiberRef.get(FiberRef.currentLogAnnotations))).toBe(0)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a tool called twice under different values is undone each time with its own call's, in reverse order",
    () =>
      Effect.gen(function* () {
        const { charge, seen, logger } = fixture()
        const chargeFor = (tenant: string, order: string) =>
          charge(order).pipe(
            Effect.provideService(Tenant, tenant),
            Effect.locally(TenantRef, tenant),
            Effect.annotateLogs("tenant", tenant)
          )
        const program = Effect.gen(function* () {
          yield* chargeFor("acme", "order-a")
          yield* chargeFor("globex", "order-b")
          yield* refused
        })
        const result = yield* Saga.run("order-3", program).pipe(Effect.provide(logger))
        expect(result._tag).toBe("Compensated")
        expect(seen.map(({ at, service, fiberRef, annotations }) => [at, service, fiberRef, annotations])).toEqual([
          ["charge", "acme", "acme", { tenant: "acme" }],
          ["charge", "globex", "globex", { tenant: "globex" }],
          ["refund", "globex", "globex", { tenant: "globex" }],
          ["refund", "acme", "acme", { tenant: "acme" }]
        ])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an operator's compensation runs an undo with the registered context and the FiberRef values of its own caller",
    () =>
      Effect.gen(function* () {
        const { charge, seen, logger } = fixture()
        const program = charge("order-2").pipe(
          Effect.provideService(Tenant, "acme"),
          Effect.locally(TenantRef, "acme"),
          Effect.annotateLogs("tenant", "acme")
        )
        const result = yield* Saga.run("order-2", program).pipe(Effect.provide(logger))
        expect(result._tag).toBe("Completed")
        yield* Saga.compensate("order-2").pipe(
          Effect.locally(TenantRef, "operator"),
          Effect.annotateLogs("operator", "ops@example.com"),
          Effect.provide(logger)
        )
        // The context is the first call's in this service (how the tool was registered); the fiber refs the operator's.
        expect(seen[1]).toEqual({
          at: "refund",
          service: "acme",
          fiberRef: "operator",
          annotations: { operator: "ops@example.com" },
          logSpans: []
        })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an undo registered with saga.register runs in the context register ran in (its type asks for what the undo needs)",
    () =>
      Effect.gen(function* () {
        const { charge, seen } = fixture()
        const stores = Layer.merge(
          Layer.succeed(Journal.Journal, yield* Journal.Journal),
          Layer.succeed(Approval.Approval, yield* Approval.Approval)
        )
        const worker = () => Saga.layer.pipe(Layer.provide(stores))
        const program = charge("order-4").pipe(Effect.provideService(Tenant, "acme"))
        expect((yield* Saga.run("order-4", program).pipe(Effect.provide(worker())))._tag).toBe("Completed")
        // An operator's process: a `Saga` service of its own, where the tool was never called.
        const report = yield* Effect.gen(function* () {
          const saga = yield* Saga.Saga
          yield* saga.register([charge]).pipe(Effect.provideService(Tenant, "registered"))
          return yield* Saga.compensate("order-4")
        }).pipe(Effect.provide(worker()))
        expect(report.status).toBe("compensated")
        expect(seen.map(({ at, service }) => [at, service])).toEqual([
          ["charge", "acme"],
          ["refund", "registered"]
        ])
      }).pipe(Effect.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
  )
})

class Tenant extends Context.Tag("Tenant")<Tenant, string>() {}

const TenantRef = FiberRef.unsafeMake("default-tenant")

interface Seen {
  readonly at: string
  readonly service: string
  readonly fiberRef: string
  readonly annotations: Record<string, unknown>
  readonly logSpans: ReadonlyArray<string>
}

const refused = Compensable.make({
  name: "ship",
  input: Schema.Null,
  success: Schema.Null,
  execute: () => Effect.fail(Outcome.failed("warehouse refused"))
})(null)

/** A tool whose call and undo record the tenant they see, and log a line each (what the logger records). */
const fixture = () => {
  const seen: Array<Seen> = []
  const note = (at: string) =>
    Effect.gen(function* () {
      yield* Effect.log(at)
      return {
        at,
        service: yield* Tenant,
        fiberRef: yield* FiberRef.get(TenantRef),
        annotations: Object.fromEntries(yield* FiberRef.get(FiberRef.currentLogAnnotations)),
        logSpans: List.toArray(yield* FiberRef.get(FiberRef.currentLogSpan)).map((span) => span.label)
      }
    })
  const logged: Array<{ readonly message: string; readonly annotations: Record<string, unknown> }> = []
  const charge = Compensable.make({
    name: "charge",
    input: Schema.String,
    success: Schema.String,
    execute: (order) =>
      Effect.as(
        Effect.flatMap(note("charge"), (at) => Effect.sync(() => seen.push(at))),
        order
      ),
    compensate: () => Effect.flatMap(note("refund"), (at) => Effect.sync(() => seen.push(at)))
  })
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, message }) =>
      logged.push({ message: String(message), annotations: Object.fromEntries(annotations) })
    )
  )
  return { charge, seen, logger, logged }
}
