package constraint

import (
	"slices"
	"sync"
	"unsafe"
)

// frame is one parse stack, hash-consed: the program state pos on top of the
// stack parent (a frame id; noFrame at the bottom). A parent frame's pos is
// the state where its caller continues.
type frame struct{ pos, parent int32 }

const (
	noFrame  = -1
	deadSet  = -1 // no continuation
	unknown  = -2 // a transition not computed yet
	maxSets  = 1 << 20
	maxCalls = 1 << 16 // nesting bound: deeper stacks are refused
)

// dset is a deterministic state: the set of stacks that have consumed the
// same bytes, each stopped before a byte edge, and whether the input so far
// is a complete sentence.
type dset struct {
	frames []int32
	accept bool
	text   int32 // textTarget: textUnknown until computed
	hole   bool  // holds a hole frame: an abstract stack returned to its context
	abs    bool  // abstract: a stack of it sits on a hole frame (see context.go)
}

// automaton determinizes a program lazily (a lazy DFA over sets of parse
// stacks). It belongs to one request and its clones; mu guards it, taken
// once per Mask or Advance.
type automaton struct {
	mu      sync.Mutex
	prog    *program
	frames  []frame
	frameIx map[frame]int32
	depth   []int32
	onHole  []bool // by frame id: a hole frame is the frame or below it
	sets    []dset
	holeAt  []bool    // by set: dset.hole, packed for walk
	trans   [][]int32 // transitions, pageSets sets a page: see transAt
	setIx   map[string]int32
	mark    []uint32
	gen     uint32
	scratch []int32
	eps     [][]int32 // epsOf's lists by program state
	epsMark []int32   // epsOf's visit marks (epsGen)
	epsGen  int32
	masks   maskCache
	parts   maskCache           // masks of abstract sets, with their escapes
	loops   maskCache           // whole-trie masks of abstract text loops (see loopMask)
	byteSet map[int32][4]uint64 // byteLoopSet's results by set
	holes   map[int32]int32     // hole frame by depth (see holeFrame)
	closed  []closed            // closure results by frame id (valid when done)
	keyBuf  []byte              // setKey's buffer
	walked  int64               // trie nodes walk visited (a statistic for tests)
}

// closed is the closure of one frame: the frames it stops at before a
// byte edge, and whether the sentence can end there.
type closed struct {
	stops        []int32
	accept, done bool
}

func newAutomaton(p *program) (*automaton, int32) {
	a := &automaton{prog: p, frameIx: map[frame]int32{}, setIx: map[string]int32{}}
	a.gen = 1
	a.scratch = a.scratch[:0]
	start := a.frameOf(p.ruleStart[p.start], noFrame)
	c := a.closureOf(start)
	a.scratch = append(a.scratch, c.stops...)
	return a, a.intern(c.accept)
}

func (a *automaton) frameOf(pos, parent int32) int32 {
	f := frame{pos, parent}
	if id, ok := a.frameIx[f]; ok {
		return id
	}
	d, abs := int32(0), false
	if parent != noFrame {
		d, abs = a.depth[parent]+1, a.onHole[parent]
	}
	a.frames = append(a.frames, f)
	a.depth = append(a.depth, d)
	a.onHole = append(a.onHole, abs)
	a.mark = append(a.mark, 0)
	a.closed = append(a.closed, closed{})
	id := int32(len(a.frames) - 1)
	a.frameIx[f] = id
	return id
}

// closureOf is the closure of frame id, computed once: frames recur in many
// deterministic states.
func (a *automaton) closureOf(id int32) closed {
	if c := a.closed[id]; c.done {
		return c
	}
	a.gen++
	base := len(a.scratch)
	accept := a.closure(id)
	c := closed{stops: slices.Clone(a.scratch[base:]), accept: accept, done: true}
	a.scratch = a.scratch[:base]
	a.closed[id] = c
	return c
}

// closure follows every move that consumes no byte from frame id, appending
// the frames that stop before a byte edge to a.scratch; it reports whether
// the sentence can end here. Frames marked with a.gen are already visited.
// A frame's epsilon moves within its rule are taken at once (epsOf), so
// only the states that call, end their rule or stop get frames.
func (a *automaton) closure(id int32) (accept bool) {
	stack := []int32{id}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if a.mark[id] == a.gen {
			continue
		}
		a.mark[id] = a.gen
		f := a.frames[id]
		for _, q := range a.epsOf(f.pos) {
			st := &a.prog.states[q]
			if len(st.bytes) > 0 || q == a.prog.hole {
				fq := id
				if q != f.pos {
					fq = a.frameOf(q, f.parent)
				}
				if fq == id || a.mark[fq] != a.gen {
					a.mark[fq] = a.gen // its own epsilon moves are in f's list
					a.scratch = append(a.scratch, fq)
				}
			}
			if len(st.calls) > 0 && a.depth[id] < maxCalls {
				for _, c := range st.calls {
					ret := f.parent
					if !c.tail {
						ret = a.frameOf(c.ret, f.parent)
					}
					stack = append(stack, a.frameOf(a.prog.ruleStart[c.rule], ret))
				}
			}
			if st.final {
				if f.parent == noFrame {
					accept = true
				} else {
					stack = append(stack, f.parent)
				}
			}
		}
	}
	return accept
}

// epsOf lists the program states reachable from state p by epsilon moves
// (p included) that have a byte edge or a call, end their rule or are the
// hole: the states closure acts on. It is computed once per state.
func (a *automaton) epsOf(p int32) []int32 {
	if a.eps == nil {
		a.eps = make([][]int32, len(a.prog.states))
		a.epsMark = make([]int32, len(a.prog.states))
	}
	if l := a.eps[p]; l != nil {
		return l
	}
	a.epsGen++
	l := []int32{}
	stack := []int32{p}
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if a.epsMark[q] == a.epsGen {
			continue
		}
		a.epsMark[q] = a.epsGen
		st := &a.prog.states[q]
		if len(st.bytes) > 0 || len(st.calls) > 0 || st.final || q == a.prog.hole {
			l = append(l, q)
		}
		stack = append(stack, st.eps...)
	}
	a.eps[p] = l
	return l
}

// intern returns the id of the set of frames in a.scratch and resets the
// scratch and the visit marks.
func (a *automaton) intern(accept bool) int32 {
	fs := a.scratch
	slices.Sort(fs)
	fs = slices.Compact(fs)
	a.scratch = fs[:0]
	a.gen++
	if len(fs) == 0 && !accept {
		return deadSet
	}
	a.keyBuf = setKey(a.keyBuf, fs, accept)
	if id, ok := a.setIx[string(a.keyBuf)]; ok {
		return id
	}
	if len(a.sets) >= maxSets {
		return deadSet
	}
	a.sets = append(a.sets, dset{frames: slices.Clone(fs), accept: accept, text: textUnknown, hole: a.holds(fs), abs: len(fs) > 0 && a.onHole[fs[0]]})
	a.holeAt = append(a.holeAt, a.sets[len(a.sets)-1].hole)
	id := int32(len(a.sets) - 1)
	if id%pageSets == 0 {
		a.trans = append(a.trans, make([]int32, pageSets<<8))
	}
	a.setIx[string(a.keyBuf)] = id
	return id
}

// setKey writes into buf the map key of the set of frames fs.
func setKey(buf []byte, fs []int32, accept bool) []byte {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(fs))), 4*len(fs))
	buf = append(buf[:0], b...)
	if accept {
		return append(buf, 1)
	}
	return append(buf, 0)
}

// The transition table is paged (growing it never copies it) and holds
// each target plus transBias, so a fresh zeroed page reads unknown.
const (
	pageSets  = 64
	transBias = -unknown
)

// transAt is the slot of set s's transition on byte c.
func (a *automaton) transAt(s int32, c byte) *int32 {
	return &a.trans[s/pageSets][int(s%pageSets)<<8|int(c)]
}

// numSets is the number of deterministic states built so far.
func (a *automaton) numSets() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sets)
}

// row is set s's transition row (pages never move, so it stays valid).
func (a *automaton) row(s int32) *[256]int32 {
	return (*[256]int32)(a.trans[s/pageSets][int(s%pageSets)<<8:])
}

// step returns the set reached from set s by byte c (deadSet if none).
func (a *automaton) step(s int32, c byte) int32 {
	if n := *a.transAt(s, c) - transBias; n != unknown {
		return n
	}
	return a.computeStep(s, c)
}

// computeStep computes and records the transition of set s on byte c, and
// of every byte of c's class: the bytes no byte edge of s's frames tells
// apart from c (no edge starts or ends between them), which all lead to
// the same set.
func (a *automaton) computeStep(s int32, c byte) int32 {
	accept := false
	lo, hi := 0, 255 // c's class
	for _, id := range a.sets[s].frames {
		f := a.frames[id]
		for _, e := range a.prog.states[f.pos].bytes {
			switch {
			case c < e.lo:
				hi = min(hi, int(e.lo)-1)
			case c > e.hi:
				lo = max(lo, int(e.hi)+1)
			default:
				lo, hi = max(lo, int(e.lo)), min(hi, int(e.hi))
				c := a.closureOf(a.frameOf(e.to, f.parent))
				a.scratch = append(a.scratch, c.stops...)
				accept = accept || c.accept
			}
		}
	}
	n := a.intern(accept)
	row := a.row(s)
	for b := lo; b <= hi; b++ {
		row[b] = n + transBias
	}
	return n
}

// stepBytes runs s over b, stopping at deadSet.
func (a *automaton) stepBytes(s int32, b []byte) int32 {
	for _, c := range b {
		if s = a.step(s, c); s < 0 {
			return s
		}
	}
	return s
}
