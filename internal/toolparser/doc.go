// Package toolparser turns model output into OpenAI tool calls, by the
// names of vLLM's --tool-call-parser:
//
//   - hermes: <tool_call>{"name": …, "arguments": {…}}</tool_call>
//     (Hermes 2/3, Qwen2.5, Qwen3);
//   - llama3_json: {"name": …, "parameters": {…}} objects, optionally
//     after <|python_tag|>, several separated by ";" (Llama 3.1/3.2);
//   - mistral: [TOOL_CALLS] followed by a JSON array (tokenizers before
//     v11) or by name[ARGS]{…}, name[CALL_ID]id[ARGS]{…} or name{…};
//   - qwen3_coder: <tool_call><function=NAME><parameter=P>VALUE</parameter>…
//     with each VALUE converted by the type the tool's schema gives P, as
//     vLLM's _convert_param_value does;
//   - pythonic: an output that begins with [f(a=1), g(b="x")] (Llama
//     3.2/4);
//   - deepseek_v3: <｜tool▁calls▁begin｜>…<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//     ```json ARGS ```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>;
//   - granite: <|tool_call|> or <tool_call> followed by a JSON array;
//   - openai: gpt-oss harmony messages to functions.NAME, after the
//     gpt-oss reasoning parser (package reasoning) has split the output.
//
// # API
//
// New(name, tools, Options) returns the Parser for one request: Tool
// carries each function's name and parameter schema (qwen3_coder types
// its values by it), Options.Rand the randomness of the call ids (nil:
// crypto/rand; tests pass a seeded source). Ids are vLLM's:
// "chatcmpl-tool-" and 32 hex digits, or 9 characters of [a-zA-Z0-9] for
// mistral. Names lists the parsers.
//
// Parser.Extract(text) parses a whole output: Result{Content, ToolCalls},
// each ToolCall{ID, Name, Arguments (JSON text)}; Content "" means none.
//
// Parser.NewStream() returns a Stream for a streamed output: Feed(dst,
// delta) appends the Deltas the new text decides, Finish(dst) those the
// end decides; neither changes the deltas already in dst. A Delta is content text or a ToolCallDelta{Index, ID,
// Name, Arguments}: the entries of OpenAI's delta.tool_calls, with ID and
// Name on the first delta of a call only and Arguments the next fragment.
// The wiring merges consecutive deltas into chunks as it likes.
//
// Parser.Markers() are the texts the parser matches that tokenizers may
// hold as special tokens (<tool_call> is one in Qwen). They reach the
// parser only if the output is detokenized with skip_special_tokens=false;
// vLLM's adjust_request sets that when the request has tools and
// tool_choice is not "none", and the wiring must do the same whenever a
// marker is a special token of the model. The parsers read text only, so
// token ids are not needed.
//
// # The one invariant
//
// Extract is the stream run over the whole text, and every decision the
// stream takes depends only on the text it has seen, so for every split of
// an output the concatenated deltas equal the whole-text result (tested at
// every byte offset, a byte and a rune at a time, and fuzzed per parser).
// Three consequences, which are where govllm differs from vLLM's parsers:
//
//   - A call is released when it is complete (its closing marker, the end
//     of its JSON value, or the end of the output), with its arguments in
//     one fragment. Before that, the text could still turn out malformed,
//     and the whole-text answer for a malformed call is content.
//   - Text outside the calls is content, before and after them; vLLM
//     drops text after a call (and llama3_json drops text before one),
//     which a stream cannot take back. A run of separators (whitespace,
//     and ";" for llama3_json) that stands only between calls, or between
//     a call and the start or end, is not content.
//   - A malformed call is content, with its markers, and its well-formed
//     neighbours stay calls (vLLM turns the whole output into content).
//     Nothing is lost: an output without calls comes back whole as
//     content. The unit is the region the format delimits: one
//     <tool_call> for hermes, the whole list for pythonic and granite, the
//     whole section for deepseek_v3. pythonic follows vLLM in dropping a
//     call whose arguments have no JSON form (bytes, inf) from a list that
//     is valid Python.
//
// Content text is released as soon as it cannot begin a call: only a
// suffix that could be the start of a marker, an incomplete UTF-8
// sequence, and separators after a call are held back.
//
// Arguments are written as Python's json.dumps(…, ensure_ascii=False)
// writes them, as vLLM's parsers do: ", " and ": " separators, keys in
// the order given (a repeated key keeps its first place and last value),
// floats in Python's repr. deepseek_v3 passes the model's JSON text on as
// written (once it is checked to be JSON), as vLLM does; openai passes
// arguments that are not JSON on as written, as vLLM does.
//
// vLLM counterpart: vllm/tool_parsers/ (hermes_tool_parser.py,
// llama_tool_parser.py, mistral_tool_parser.py, qwen3coder_tool_parser.py,
// pythonic_tool_parser.py, deepseekv3_tool_parser.py,
// granite_tool_parser.py, openai_tool_parser.py). Imports nothing internal.
package toolparser
