package constraint

import (
	"fmt"
	"strings"
)

// byteEdge moves to state to on a byte in [lo, hi].
type byteEdge struct {
	lo, hi byte
	to     int32
}

// callEdge runs rule, then continues at ret. A tail call (ret reaches
// only the end of its rule, consuming nothing) returns straight to the
// caller's caller, so stacks reached through different tail calls coincide.
type callEdge struct {
	rule, ret int32
	tail      bool
}

// nstate is one state of the program: a Thompson NFA state of one rule.
type nstate struct {
	bytes []byteEdge
	eps   []int32
	calls []callEdge
	final bool // the end state of its rule
}

// program is a compiled grammar: every rule's NFA in one state array (a
// recursive transition network). It is immutable once built and shared.
type program struct {
	states    []nstate
	ruleStart []int32
	ruleNames []string
	start     int32 // the start rule
	hole      int32 // a state with no edge: the context an abstract stack returns to (see context.go)

	shared map[*expr]int32 // while building: repeated bodies made rules
}

// grammarBuilder collects rules before they are compiled to a program.
type grammarBuilder struct {
	rules []*expr
	names []string
}

// newRule reserves a rule (its body is set later, so rules may recurse).
func (g *grammarBuilder) newRule(name string) int32 {
	g.rules = append(g.rules, nil)
	g.names = append(g.names, name)
	return int32(len(g.rules) - 1)
}

func (g *grammarBuilder) setRule(id int32, e *expr) { g.rules[id] = e }

// compile turns the rules into a program starting at rule start. It refuses
// left recursion (the matcher would expand it forever) and rules left
// undefined.
func (g *grammarBuilder) compile(start int32) (*program, error) {
	p := &program{ruleStart: make([]int32, len(g.rules)), ruleNames: g.names, start: start}
	for id, e := range g.rules {
		if e == nil {
			return nil, fmt.Errorf("rule %q is not defined", g.names[id])
		}
		in := p.newState()
		p.ruleStart[id] = in
		out := p.frag(e, in)
		p.states[out].final = true
	}
	p.shared = nil
	p.hole = p.newState()
	if err := p.checkLeftRecursion(); err != nil {
		return nil, err
	}
	p.markTailCalls()
	return p, nil
}

func (p *program) newState() int32 {
	p.states = append(p.states, nstate{})
	return int32(len(p.states) - 1)
}

func (p *program) eps(from, to int32) { p.states[from].eps = append(p.states[from].eps, to) }

// frag builds e's NFA starting at state in and returns its end state.
func (p *program) frag(e *expr, in int32) int32 {
	switch e.kind {
	case eEmpty:
		return in
	case eNone:
		return p.newState()
	case eBytes:
		out := p.newState()
		for _, r := range e.ranges {
			p.states[in].bytes = append(p.states[in].bytes, byteEdge{r.lo, r.hi, out})
		}
		return out
	case eSeq:
		for _, s := range e.subs {
			in = p.frag(s, in)
		}
		return in
	case eAlt:
		out := p.newState()
		for _, s := range e.subs {
			st := p.newState()
			p.eps(in, st)
			p.eps(p.frag(s, st), out)
		}
		return out
	case eRep:
		return p.repFrag(e, in)
	case eRef:
		out := p.newState()
		p.states[in].calls = append(p.states[in].calls, callEdge{rule: e.rule, ret: out})
		return out
	}
	panic("constraint: unknown expr kind")
}

// sharedBodySize is the expr size above which a body repeated more than
// once becomes a rule of its own (its copies are then one call each).
const sharedBodySize = 8

func (p *program) repFrag(e *expr, in int32) int32 {
	if copies := max(e.max, e.min+1); copies > 1 && exprSize(e.subs[0], sharedBodySize) > sharedBodySize {
		e = &expr{kind: eRep, subs: []*expr{ref(p.sharedRule(e.subs[0]))}, min: e.min, max: e.max}
	}
	cur := in
	for range e.min {
		next := p.newState()
		p.eps(p.frag(e.subs[0], cur), next)
		cur = next
	}
	if e.max < 0 {
		loop := p.newState()
		p.eps(cur, loop)
		body := p.newState()
		p.eps(loop, body)
		p.eps(p.frag(e.subs[0], body), loop)
		return loop
	}
	end := p.newState()
	for range e.max - e.min {
		p.eps(cur, end)
		next := p.newState()
		p.eps(p.frag(e.subs[0], cur), next)
		cur = next
	}
	p.eps(cur, end)
	return end
}

// sharedRule returns the rule made of body e, adding it on first use.
func (p *program) sharedRule(e *expr) int32 {
	if id, ok := p.shared[e]; ok {
		return id
	}
	if p.shared == nil {
		p.shared = map[*expr]int32{}
	}
	id := int32(len(p.ruleStart))
	p.shared[e] = id
	p.ruleStart = append(p.ruleStart, 0)
	p.ruleNames = append(p.ruleNames, "repeated")
	in := p.newState()
	p.ruleStart[id] = in
	p.states[p.frag(e, in)].final = true
	return id
}

// exprSize counts e's nodes, stopping above limit.
func exprSize(e *expr, limit int) int {
	n := 1
	for _, s := range e.subs {
		if n > limit {
			break
		}
		n += exprSize(s, limit-n)
	}
	return n
}

// markTailCalls flags the calls whose return state only leads, without
// consuming a byte, to the end of its rule.
func (p *program) markTailCalls() {
	for i := range p.states {
		for j, c := range p.states[i].calls {
			p.states[i].calls[j].tail = p.onlyEnds(c.ret)
		}
	}
}

func (p *program) onlyEnds(s int32) bool {
	final, pure := false, true
	p.walkFree(s, func(st *nstate) []int32 {
		pure = pure && len(st.bytes) == 0 && len(st.calls) == 0
		final = final || st.final
		return nil
	})
	return pure && final
}

// walkFree visits every state reachable from s by epsilon moves and by the
// extra states next returns for each visited one, once each.
func (p *program) walkFree(s int32, next func(st *nstate) []int32) {
	seen := map[int32]bool{}
	stack := []int32{s}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] {
			continue
		}
		seen[s] = true
		st := &p.states[s]
		stack = append(stack, st.eps...)
		stack = append(stack, next(st)...)
	}
}

// nullable reports, for every rule, whether it matches the empty string.
func (p *program) nullable() []bool {
	null := make([]bool, len(p.ruleStart))
	for changed := true; changed; {
		changed = false
		for r, s := range p.ruleStart {
			if !null[r] && p.reachesEnd(s, null, nil) {
				null[r], changed = true, true
			}
		}
	}
	return null
}

// reachesEnd walks from state s without consuming a byte (calling only
// nullable rules) and reports whether a final state is reached; every rule
// called on the way is passed to called.
func (p *program) reachesEnd(s int32, null []bool, called func(rule int32)) bool {
	end := false
	p.walkFree(s, func(st *nstate) []int32 {
		end = end || st.final
		var rets []int32
		for _, c := range st.calls {
			if called != nil {
				called(c.rule)
			}
			if null[c.rule] {
				rets = append(rets, c.ret)
			}
		}
		return rets
	})
	return end
}

// checkLeftRecursion refuses a rule that can call itself before consuming
// a byte.
func (p *program) checkLeftRecursion() error {
	null := p.nullable()
	left := make([][]int32, len(p.ruleStart))
	for r, s := range p.ruleStart {
		p.reachesEnd(s, null, func(c int32) { left[r] = append(left[r], c) })
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(left))
	var path []string
	var visit func(r int32) bool
	visit = func(r int32) bool {
		color[r] = grey
		path = append(path, p.ruleNames[r])
		for _, c := range left[r] {
			if color[c] == grey || color[c] == white && visit(c) {
				if color[c] == grey {
					path = append(path, p.ruleNames[c])
				}
				return true
			}
		}
		color[r] = black
		path = path[:len(path)-1]
		return false
	}
	for r := range left {
		if color[r] == white && visit(int32(r)) {
			return fmt.Errorf("left recursion is not supported: %s", strings.Join(path, " -> "))
		}
	}
	return nil
}
