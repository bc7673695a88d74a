/**
 * @since 0.1.0
 */
export * as Approval from "./Approval.js"
/**
 * @since 0.1.0
 */
export * as Authority from "./Authority.js"
/**
 * @since 0.1.0
 */
export * as Compensable from "./Compensable.js"
/**
 * @since 0.1.0
 */
export * as CompensationReport from "./CompensationReport.js"
/**
 * @since 0.1.0
 */
export * as Journal from "./Journal.js"
/**
 * @since 0.2.0
 */
export * as Keys from "./Keys.js"
/**
 * @since 0.2.0
 */
export * as Manifest from "./Manifest.js"
/**
 * @since 0.2.0
 */
export * as Metrics from "./Metrics.js"
/**
 * @since 0.1.0
 */
export * as Outcome from "./Outcome.js"
/**
 * @since 0.1.0
 */
export * as Recovery from "./Recovery.js"
/**
 * @since 0.1.0
 */
export * as Saga from "./Saga.js"
/**
 * @since 0.1.0
 */
export * as SagaDefinition from "./SagaDefinition.js"
/**
 * @since 0.1.0
 */
export * as SagaError from "./SagaError.js"
/**
 * @since 0.1.0
 */
export * as SagaResult from "./SagaResult.js"
/**
 * @since 0.1.0
 */
export * as SqlApproval from "./SqlApproval.js"
/**
 * @since 0.1.0
 */
export * as SqlJournal from "./SqlJournal.js"
/**
 * @since 0.2.0
 */
export * as SqlStore from "./SqlStore.js"
/**
 * @since 0.1.0
 */
export * as Timeline from "./Timeline.js"
/**
 * @since 0.1.0
 */
export * as Toolkit from "./Toolkit.js"
