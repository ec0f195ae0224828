package jinja

// LoopsOverMessageContent reports whether the template iterates over a
// message's content ({% for part in message['content'] %} where message
// comes from a loop over messages, or over a variable set from messages):
// vLLM's _detect_content_format rule for choosing the "openai" content
// format (content as a list of parts) over "string". As in vLLM, a loop
// over messages with a tuple target ends the search with false.
func (t *Template) LoopsOverMessageContent() bool {
	var fors []*forNode
	var sets []*setNode
	collect(t.nodes, &fors, &sets)
	messages := relatedNames(sets, "messages")
	var items []string
	for _, f := range fors {
		for _, m := range messages {
			if accesses(f.iter, m, "") {
				if f.keyVar != "" {
					return false
				}
				items = append(items, f.valVar)
				break
			}
		}
	}
	for _, f := range fors {
		for _, m := range items {
			if accesses(f.iter, m, "content") {
				return true
			}
		}
	}
	return false
}

// relatedNames is name and every variable set (transitively) from it.
func relatedNames(sets []*setNode, name string) []string {
	names := []string{name}
	for i := 0; i < len(names); i++ {
		for _, s := range sets {
			if s.namespace == "" && accesses(s.value, names[i], "") && s.target != names[i] {
				names = append(names, s.target)
			}
		}
	}
	return names
}

// accesses reports whether e is name (key "") or name[key] / name.key,
// possibly sliced, filtered or tested.
func accesses(e expr, name, key string) bool {
	switch x := e.(type) {
	case *filterExpr:
		return accesses(x.expr, name, key)
	case *testExpr:
		return accesses(x.expr, name, key)
	case *sliceExpr:
		return accesses(x.obj, name, key)
	case *nameExpr:
		return key == "" && x.name == name
	case *attrExpr:
		return key != "" && x.attr == key && accesses(x.obj, name, "") && isName(x.obj)
	case *itemExpr:
		lit, ok := x.key.(*litExpr)
		return key != "" && ok && lit.val.IsString() && lit.val.AsString() == key && isName(x.obj) && accesses(x.obj, name, "")
	}
	return false
}

func isName(e expr) bool {
	_, ok := e.(*nameExpr)
	return ok
}

// collect gathers every for and set node of the tree.
func collect(nodes []node, fors *[]*forNode, sets *[]*setNode) {
	for _, n := range nodes {
		switch x := n.(type) {
		case *forNode:
			*fors = append(*fors, x)
			collect(x.body, fors, sets)
			collect(x.elseBody, fors, sets)
		case *setNode:
			*sets = append(*sets, x)
		case *ifNode:
			for _, b := range x.branches {
				collect(b.body, fors, sets)
			}
		case *macroNode:
			collect(x.body, fors, sets)
		case *callNode:
			collect(x.body, fors, sets)
		case *filterBlockNode:
			collect(x.body, fors, sets)
		case *setBlockNode:
			collect(x.body, fors, sets)
		}
	}
}
