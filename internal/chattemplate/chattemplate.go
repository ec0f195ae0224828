package chattemplate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"govllm/internal/jinja"
)

// Default is the template used when neither the model nor the command line
// provides one: the BOS token, then one "role: content" line per message,
// then "assistant:" when a generation prompt is asked for.
const Default = "{{ bos_token }}{% for message in messages %}{{ message['role'] + ': ' + message['content'] + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ 'assistant:' }}{% endif %}"

// Message is one chat message. Templates see it as vLLM hands it to
// transformers (see messageValue): role, content, then tool_calls
// (assistant), tool_call_id (tool) and name when set.
type Message struct {
	Role string
	// Content is the text: a parts array joined with "\n", "" for null
	// (what templates see in vLLM's "string" content format).
	Content string
	// Parts are the text parts as sent, for the "openai" content format:
	// nil means Content is the one part; empty (non-nil) means null.
	Parts      []string
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string
	// Reasoning is an assistant message's reasoning, given to the template
	// as reasoning_content (Qwen3's name) and reasoning (vLLM's newer one).
	Reasoning string
}

// ToolCall is one call in an assistant message's history.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON text the client sent; templates see it parsed
	// into an object (vLLM's _postprocess_messages), or {} when it is not
	// valid JSON.
	Arguments string
}

// Tool is one function tool offered to the model.
type Tool struct {
	Name        string
	Description *string
	// Parameters is the JSON-Schema object (a *jsonvalue.Object), or nil.
	Parameters any
	Strict     *bool
}

// Options are the per-render inputs.
type Options struct {
	AddGenerationPrompt bool
	// Tools, when non-nil, is the template's tools variable (undefined
	// otherwise, as transformers leaves it when no tools are given).
	Tools []Tool
	// Kwargs are extra template variables (vLLM chat_template_kwargs),
	// e.g. date_string; values may hold *jsonvalue.Object. They never
	// override messages, tools, add_generation_prompt, bos_token or
	// eos_token.
	Kwargs map[string]any
}

// Template is a compiled chat template; safe for concurrent use.
type Template struct {
	src      string
	openai   bool // vLLM's "openai" content format (see ContentFormat)
	tmpl     *jinja.Template
	bos, eos string
	now      func() time.Time
}

// ErrTemplate marks errors raised by the template itself (raise_exception,
// e.g. "Conversation roles must alternate"): the conversation is at fault,
// so the server answers 400.
var ErrTemplate = errors.New("chat template rejected the conversation")

// New compiles src ("" selects Default) with the model's BOS and EOS token
// strings.
func New(src, bosToken, eosToken string) (*Template, error) {
	if src == "" {
		src = Default
	}
	t, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("chattemplate: compiling: %w", err)
	}
	return &Template{src: src, tmpl: t, openai: t.LoopsOverMessageContent(), bos: bosToken, eos: eosToken, now: time.Now}, nil
}

// ContentFormat is the form of message content the template sees, chosen
// as vLLM's "auto" does: "openai" (a list of {"type": "text", "text"}
// parts) when the template loops over a message's content, else "string".
func (t *Template) ContentFormat() string {
	if t.openai {
		return "openai"
	}
	return "string"
}

// Source returns the template text.
func (t *Template) Source() string { return t.src }

// Render formats msgs into the prompt text.
func (t *Template) Render(msgs []Message, opts Options) (string, error) {
	data := make(map[string]jinja.Value, len(opts.Kwargs)+8)
	for k, v := range opts.Kwargs {
		data[k] = toValue(v)
	}
	var raised error
	data["messages"] = messagesValue(msgs, t.openai)
	delete(data, "tools")
	if opts.Tools != nil {
		data["tools"] = toolsValue(opts.Tools)
	}
	data["add_generation_prompt"] = jinja.NewBool(opts.AddGenerationPrompt)
	data["bos_token"] = jinja.NewString(t.bos)
	data["eos_token"] = jinja.NewString(t.eos)
	data["raise_exception"] = jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		msg := "raise_exception called"
		if len(args) > 0 {
			msg = str(args[0])
		}
		raised = fmt.Errorf("%w: %s", ErrTemplate, msg)
		return jinja.Undefined(), raised
	})
	data["strftime_now"] = jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		format := "%Y-%m-%d"
		if len(args) > 0 {
			format = str(args[0])
		}
		return jinja.NewString(Strftime(t.now(), format)), nil
	})
	out, err := t.tmpl.RenderValues(data)
	if err != nil {
		if raised != nil {
			return "", raised
		}
		return "", fmt.Errorf("chattemplate: rendering: %w", err)
	}
	return out, nil
}

// Strftime formats tm with the Python strftime directives templates use
// (%d %b %Y %B %m %y %H %M %S %a %A %j %p %%); unknown directives are kept.
func Strftime(tm time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'd':
			fmt.Fprintf(&b, "%02d", tm.Day())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(tm.Month()))
		case 'Y':
			fmt.Fprintf(&b, "%04d", tm.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", tm.Year()%100)
		case 'b':
			b.WriteString(tm.Month().String()[:3])
		case 'B':
			b.WriteString(tm.Month().String())
		case 'a':
			b.WriteString(tm.Weekday().String()[:3])
		case 'A':
			b.WriteString(tm.Weekday().String())
		case 'H':
			fmt.Fprintf(&b, "%02d", tm.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", tm.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", tm.Second())
		case 'j':
			fmt.Fprintf(&b, "%03d", tm.YearDay())
		case 'p':
			if tm.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// str is Jinja's string conversion of a call argument (no quotes).
func str(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return v.String()
}
