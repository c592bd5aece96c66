// Parse Mermaid diagrams with Mermaid's own parser: one JSON list of diagram texts on stdin,
// one JSON list on stdout with null for a diagram that parses and the parser's message for
// one that does not. Mermaid needs a DOM to load; jsdom gives it one.
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const text of JSON.parse(input)) {
  try {
    await mermaid.parse(text);
    results.push(null);
  } catch (err) {
    results.push(String(err?.message ?? err));
  }
}
process.stdout.write(JSON.stringify(results));
