// Package jsonvalue decodes JSON into plain Go values whose objects keep
// their keys in document order (*Object), for data that must be rendered
// back in the order the client sent it: tool parameter schemas and
// chat_template_kwargs reach chat templates, whose `tojson` filter and
// `items()` loops follow Python dict order, which is insertion order.
//
// vLLM counterpart: none (Python's json.loads returns insertion-ordered
// dicts).
//
// Imports: the standard library only.
//
// Invariants:
//   - Parse returns nil, bool, string, json.Number, []any or *Object, never
//     map[string]any;
//   - a duplicated key keeps its first position and its last value (as
//     Python's json.loads does);
//   - Object.MarshalJSON writes the keys in their order.
package jsonvalue
