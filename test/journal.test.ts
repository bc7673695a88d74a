import { Journal } from "../src/index.js"
import { suite } from "./JournalSuite.js"

suite("layerMemory", Journal.layerMemory)
