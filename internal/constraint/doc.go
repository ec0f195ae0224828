// Package constraint is the structured-output engine: it compiles a
// constraint (a JSON Schema, any JSON object, a regex, a choice list or an
// EBNF/GBNF grammar) into a byte-level grammar and, for a vocabulary,
// computes at each decoding step the bitset of tokens that keep the output
// inside the constraint.
//
// Design. Every constraint becomes a context-free grammar whose rule bodies
// are regular expressions over bytes with rule references (expr); all rules
// are compiled to one recursive transition network (program: a Thompson NFA
// per rule with call edges). A request walks it with a lazily built
// deterministic automaton (automaton): each deterministic state is the set
// of hash-consed parse stacks reachable after the bytes so far, so
// ambiguity (anyOf, optional properties, overlapping keys) costs no
// backtracking, and a transition once computed is a table lookup. Left
// recursion is refused at compile time.
//
// Masks. A Matcher holds the vocabulary as a trie of token byte strings in
// preorder (built once, immutable, shared). State.Mask walks the trie from
// the current deterministic state, one transition per trie edge, and skips
// every subtree whose prefix is dead. Tokens spanning several terminals,
// byte-fallback tokens and tokens holding part of a UTF-8 character need no
// special case: the grammar is over bytes. Special tokens are never allowed;
// the EOS ids exactly when the output is complete. Recent masks are cached
// per deterministic state (inside a long string the state recurs), and the
// states of one compiled constraint share the automaton, so a request
// reuses what earlier ones computed. Where
// every string-text character (a whole UTF-8 character allowed raw in a
// JSON string) leads to one same state (see textloop.go: inside strings,
// counted by minLength/maxLength or not), the text tokens are allowed by
// their character count from precomputed bitsets and only the other tokens'
// trie is walked (the text checks step one byte per byte class of a
// state). Transitions are kept in one flat table; computing one records it
// for the stepped byte's whole class (the bytes no edge of the state tells
// apart).
//
// Masks abstracted from their context (context.go). A set's mask is the
// union of the masks of its frame groups (the stacks sharing one parent
// frame); each group is walked once with the parent replaced by a hole
// frame, and that abstract mask is cached, so the key-start sets of a
// member chain (a new set at each position, the member rule being called
// from a different place) share one walk. Where an abstract stack returns
// into the hole (an escape), the subtree is walked again from the
// parent's closure. Where a walk meets a text loop after string-text
// bytes, the subtree's tokens come from the loop's own cached mask. Equal
// subschemas compile to one rule, and objects share the rules of their
// additional keys' text, so those walks are shared too. A walk from a
// set that steps back to itself on at least 32 bytes (a byte loop, inside
// a string under a format or pattern: byteloop.go) takes the tokens made
// of those bytes from a bitset built once per Matcher and byte set.
// Closures take a frame's epsilon moves at once (lists per program
// state). A real set's text target comes from its frame groups' abstract
// sets when each group's is uniform (textparts.go): a counted string's
// position costs one new set instead of stepping every UTF-8 class. An
// additional key takes non-ASCII characters through one shared rule, so
// after any key prefix the set inside a multi-byte character is the key
// text loop's own, and walk decides those subtrees from the loop's mask.
// Subtrees of 4,096 tokens or more have their tokens as a bitset (built
// once per Matcher) for the shortcuts that OR a mask over a subtree.
//
// JSON Schema. The schema is first checked with
// github.com/santhosh-tekuri/jsonschema (ErrInvalidSchema). A feature that
// cannot be enforced exactly is an *UnsupportedError naming it (never a
// looser grammar). Where the constraint is stricter than the schema the
// output is still always valid: integers without a fraction or exponent,
// bounded numbers without an exponent, canonical string escapes in
// constrained strings, formats as a strict subset of the format, very large
// bounds and counts clamped inwards. Object members come in any order by
// default (Options.OrderedProperties: declaration order); a key may repeat,
// each occurrence satisfying its schema.
//
// Use (the engine's side):
//
//	m, _ := constraint.NewMatcher(constraint.TokenizerVocab{T: tok}) // once per vocabulary
//	c, err := constraint.JSONSchema(schema, constraint.Options{})   // or JSONObject, Regex, Choice, Grammar; cache by source
//	s := c.NewState(m)                                             // per request; s.Clone() for n > 1
//	s.Mask(bits)               // before sampling: bit id set = token id allowed (EOS only when complete)
//	err = s.Advance(id)        // after sampling; an error means id was not allowed
//	s.IsAccepting(); s.ForcedBytes() // may stop / may fast-forward
//
// Imports: the standard library and internal/tokenizer (for the
// TokenizerVocab adapter) only.
package constraint
