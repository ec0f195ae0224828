// langchain.mjs: LangChain JS's tool loop through a two-step weather
// conversation: ChatOpenAI.bindTools([tool], {tool_choice: "required"})
// answers an AIMessage with tool_calls; the tool (a zod-schema tool() from
// @langchain/core) is invoked with each call and returns its ToolMessage;
// the model bound with tool_choice "none" then answers the conversation
// with an AIMessage whose content is the final text. The
// "required-streamed" case streams both steps with .stream() (sent with
// stream_options) and concatenates the AIMessageChunks, whose
// tool_call_chunks become the tool_calls.
//
// Usage: OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 MODEL=name node langchain.mjs
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { answerTokens, baseURL, callTokens, description, model, question, recorder, report, seed, WeatherArgs, weatherTool } from "./weather.mjs";

// ask sends messages to a bound model: invoke, or stream and concatenate.
async function ask(bound, messages, streamed) {
  if (!streamed) return bound.invoke(messages);
  let message;
  for await (const chunk of await bound.stream(messages)) message = message ? message.concat(chunk) : chunk;
  return message;
}

for (const c of [{ name: "required", streamed: false }, { name: "required-streamed", streamed: true }]) {
  const rec = recorder();
  const weather = weatherTool();
  const getWeather = tool((args) => weather.run(args), { name: "get_weather", description, schema: WeatherArgs });
  const chat = (maxTokens) => new ChatOpenAI({
    model,
    apiKey: "none",
    configuration: { baseURL, fetch: rec.fetch },
    maxRetries: 0,
    temperature: 1,
    maxTokens,
  });

  const messages = [new HumanMessage(question)];
  const call = await ask(chat(callTokens).bindTools([getWeather], {
    tool_choice: "required",
    parallel_tool_calls: false, // one call: a random-weight model never stops adding calls
    seed,
  }), messages, c.streamed);
  messages.push(call);
  for (const tc of call.tool_calls) {
    messages.push(await getWeather.invoke(tc)); // a ToolCall in, a ToolMessage out
  }
  const answer = await ask(chat(answerTokens).bindTools([getWeather], { tool_choice: "none", seed }), messages, c.streamed);
  report({ client: "langchain", name: c.name, toolChoice: "required", exchanges: rec.exchanges, tool: weather, finalText: answer.content });
}
