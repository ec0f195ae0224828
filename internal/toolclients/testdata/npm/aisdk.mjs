// aisdk.mjs: the AI SDK's tool loop, generateText({tools}), through a
// two-step weather conversation with the OpenAI-compatible provider.
// toolChoice "required" applies to every step, so alone it would call the
// tool until the step limit; prepareStep keeps it for step one and asks
// step two with toolChoice "none" (and a small maxOutputTokens), so the
// SDK runs the tool's execute on step one's call, sends its result, and
// the text of step two is result.text. stopWhen: stepCountIs(2) bounds the
// loop. The "required-streamed" case runs the same through streamText
// (both steps streamed; a failed stream rejects result.steps). The
// provider has no parallel_tool_calls setting: it goes in providerOptions,
// which the OpenAI-compatible provider sends as body fields.
//
// Usage: OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 MODEL=name node aisdk.mjs
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { answerTokens, baseURL, callTokens, description, model, question, recorder, report, seed, WeatherArgs, weatherTool } from "./weather.mjs";

for (const [name, run] of [["required", generateText], ["required-streamed", streamText]]) {
  const rec = recorder();
  const weather = weatherTool();
  const govllm = createOpenAICompatible({ name: "govllm", baseURL, apiKey: "none", fetch: rec.fetch });
  const result = await run({ // generateText's promise, or streamText's result
    model: govllm.chatModel(model),
    prompt: question,
    tools: {
      get_weather: tool({ description, inputSchema: WeatherArgs, execute: async (args) => weather.run(args) }),
    },
    toolChoice: "required",
    prepareStep: ({ stepNumber }) => (stepNumber === 0 ? undefined : { toolChoice: "none", maxOutputTokens: answerTokens }),
    stopWhen: stepCountIs(2),
    maxOutputTokens: callTokens,
    temperature: 1,
    seed,
    maxRetries: 0,
    // one call: a random-weight model never stops adding calls
    providerOptions: { govllm: { parallel_tool_calls: false } },
  });
  const steps = await result.steps;
  if (steps.length !== 2 || steps[0].toolResults.length !== 1) {
    console.error(`AI SDK ${name}: ${steps.length} steps, step one's tool results: ${JSON.stringify(steps[0]?.toolResults)}`);
    process.exitCode = 1;
  }
  report({ client: "ai-sdk", name, toolChoice: "required", exchanges: rec.exchanges, tool: weather, finalText: await result.text });
}
