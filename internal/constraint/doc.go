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
// per deterministic state (inside a long string the state recurs).
//
// JSON Schema. A schema feature that cannot be enforced exactly is a
// compile error naming it (never a looser grammar); where the constraint is
// stricter than the schema (integers without a fraction, canonical string
// escapes in constrained strings, number bounds rounded inwards, properties
// in declaration order with additional properties after them) the output is
// still always valid.
//
// Imports: the standard library and internal/tokenizer (for the
// TokenizerVocab adapter) only.
package constraint
