// The Vercel AI SDK's own telemetry, exported over OTLP/HTTP (protobuf) to the service a test
// started: generateText calling a tool and answering, then streamText, against `ai/test`'s
// mock model (no network beyond loopback).
//
// Usage: node emit.mjs <OTLP traces URL>; the key comes in $TRACETUI_KEY.
// Exits 0 only when every export succeeded; otherwise prints why and exits 1.
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { generateText, streamText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3, simulateReadableStream } from "ai/test";
import { z } from "zod";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";

const url = process.argv[2];
if (!url) {
  console.error("usage: node emit.mjs <OTLP traces URL>");
  process.exit(2);
}

// Every export's result, checked at the end: the SDK only logs a failed export.
const results = [];
const otlp = new OTLPTraceExporter({
  url,
  headers: { Authorization: `Bearer ${process.env.TRACETUI_KEY ?? ""}` },
});
const exporter = {
  export(spans, done) {
    otlp.export(spans, (result) => {
      results.push({ spans: spans.length, code: result.code, error: result.error });
      done(result);
    });
  },
  shutdown: () => otlp.shutdown(),
  forceFlush: () => otlp.forceFlush(),
};
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": "vercel-emitter" }),
  spanProcessors: [new BatchSpanProcessor(exporter)],
});
// The SDK nests its spans through the active context: without a context manager each span
// would start a trace of its own.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const tracer = provider.getTracer("vercel-emitter");

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const finish = { unified: "stop", raw: "stop" };

// Two model calls: the first asks for the weather tool, the second answers with its result.
const model = new MockLanguageModelV3({
  provider: "openai.chat",
  modelId: "gpt-4o-mini",
  doGenerate: [
    {
      content: [
        {
          type: "tool-call",
          toolCallId: "call-weather-1",
          toolName: "weather",
          input: JSON.stringify({ city: "Paris" }),
        },
      ],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: usage(20, 8),
      warnings: [],
    },
    {
      content: [{ type: "text", text: "It is sunny in Paris, 21 degrees." }],
      finishReason: finish,
      usage: usage(40, 12),
      warnings: [],
    },
  ],
});

const answer = await generateText({
  model,
  system: "You answer questions about the weather.",
  prompt: "What is the weather in Paris?",
  tools: {
    weather: tool({
      description: "The current weather in a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, forecast: "sunny", celsius: 21 }),
    }),
  },
  stopWhen: stepCountIs(3),
  experimental_telemetry: { isEnabled: true, functionId: "weather-agent", tracer },
});
if (answer.text !== "It is sunny in Paris, 21 degrees.") {
  console.error(`generateText answered ${JSON.stringify(answer.text)}`);
  process.exit(1);
}

const streamed = streamText({
  model: new MockLanguageModelV3({
    provider: "openai.chat",
    modelId: "gpt-4o-mini",
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: "text-start", id: "t1" },
          { type: "text-delta", id: "t1", delta: "Streamed " },
          { type: "text-delta", id: "t1", delta: "hello." },
          { type: "text-end", id: "t1" },
          { type: "finish", finishReason: finish, usage: usage(10, 5) },
        ],
      }),
    }),
  }),
  prompt: "Say hello in a stream.",
  experimental_telemetry: { isEnabled: true, functionId: "greeter", tracer },
});
const streamedText = await streamed.text;
if (streamedText !== "Streamed hello.") {
  console.error(`streamText answered ${JSON.stringify(streamedText)}`);
  process.exit(1);
}

await provider.forceFlush();
await provider.shutdown();
const failed = results.filter((r) => r.code !== 0);
if (results.length === 0 || failed.length > 0) {
  const why = failed.map((r) => String(r.error ?? `code ${r.code}`)).join("; ");
  console.error(`export failed: ${results.length} exports, ${failed.length} failed: ${why}`);
  process.exit(1);
}
console.log(JSON.stringify({ exports: results.length, spans: results.reduce((n, r) => n + r.spans, 0) }));
