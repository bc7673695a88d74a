/**
 * The web console's routes.
 */
import * as Layer from "effect/Layer"
import type { CommandOptions } from "../commands.js"

/**
 * The console's routes.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (_options: CommandOptions) => Layer.empty
