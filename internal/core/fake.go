package core

import (
	"context"
	"errors"
	"fmt"

	"govllm/internal/sched"
)

// ErrFakeKV is wrapped by FakeExecutor's KV-consistency errors.
var ErrFakeKV = errors.New("core: fake executor: KV inconsistency")

// FakeExecutor is a deterministic Executor for tests: the next token is
// FakeToken(request id, position, last token) within Vocab, so a request's
// output does not depend on batching, chunking or preemption. It never
// returns −1 for a request that samples.
//
// When NumBlocks and BlockSize are set it also plays the KV cache: it
// stores the token written at every slot and fails with ErrFakeKV when a
// request attends to a slot (a position before Start) holding a token other
// than the request's own, which catches wrong prefix-cache reuse, blocks
// freed too early and bad recomputation after preemption.
type FakeExecutor struct {
	Vocab int32 // token ids are in [0, Vocab); 0 means 1000
	// EOSAfter > 0 makes the EOSAfter-th output token of every request
	// EOSTokenID and keeps EOSTokenID out of earlier positions.
	EOSAfter   int
	EOSTokenID int32

	NumBlocks, BlockSize int

	// Err, when non-nil, is returned by Execute (failure injection).
	Err error

	Steps  int // Execute calls
	Tokens int // tokens fed in total

	kv  []int32
	out sched.RunnerOutput
}

// FakeToken is the FakeExecutor's next token after last at position pos.
func FakeToken(id sched.RequestID, pos int, last int32, vocab int32) int32 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= uint64(pos)*0x9E3779B97F4A7C15 + uint64(uint32(last))*0xC2B2AE3D27D4EB4F
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int32(h % uint64(vocab))
}

// Execute implements Executor.
func (f *FakeExecutor) Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	if f.Err != nil {
		return nil, f.Err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.Steps++
	vocab := f.Vocab
	if vocab <= 0 {
		vocab = 1000
	}
	f.out.SampledTokenIDs = f.out.SampledTokenIDs[:0]
	f.out.SpecTokenIDs = nil
	for i := range so.Requests {
		sr := &so.Requests[i]
		f.Tokens += len(sr.TokenIDs)
		if err := f.checkKV(sr); err != nil {
			return nil, err
		}
		tok := int32(-1)
		if sr.Sample {
			tok = f.verify(so, i, vocab)
		}
		f.out.SampledTokenIDs = append(f.out.SampledTokenIDs, tok)
	}
	return &f.out, nil
}

// verify samples request i's token after its last known token and, while
// each sample equals the draft fed after it, the token after that draft
// too (into SpecTokenIDs), as the runner verifies speculative drafts.
func (f *FakeExecutor) verify(so *sched.SchedulerOutput, i int, vocab int32) int32 {
	sr := &so.Requests[i]
	nd := len(sr.SpecTokenIDs)
	known := len(sr.TokenIDs) - nd
	numOut := len(sr.OutputTokenIDs)
	first := f.next(sr.ID, sr.Start+known, sr.TokenIDs[known-1], numOut, vocab)
	if nd == 0 {
		return first
	}
	if f.out.SpecTokenIDs == nil {
		f.out.SpecTokenIDs = make([][]int32, len(so.Requests))
	}
	tok := first
	for j := 0; j < nd && tok == sr.SpecTokenIDs[j]; j++ {
		tok = f.next(sr.ID, sr.Start+known+j+1, tok, numOut+j+1, vocab)
		f.out.SpecTokenIDs[i] = append(f.out.SpecTokenIDs[i], tok)
	}
	return first
}

// next is the token at position pos after last, for a request with numOut
// outputs before it.
func (f *FakeExecutor) next(id sched.RequestID, pos int, last int32, numOut int, vocab int32) int32 {
	tok := FakeToken(id, pos, last, vocab)
	if f.EOSAfter > 0 {
		if numOut+1 == f.EOSAfter {
			return f.EOSTokenID
		}
		if tok == f.EOSTokenID {
			tok = (tok + 1) % vocab
		}
	}
	return tok
}

// checkKV verifies the slots before Start and writes the fed tokens.
func (f *FakeExecutor) checkKV(sr *sched.ScheduledRequest) error {
	if f.NumBlocks <= 0 || f.BlockSize <= 0 {
		return nil
	}
	bs := f.BlockSize
	if f.kv == nil {
		f.kv = make([]int32, f.NumBlocks*bs)
		for i := range f.kv {
			f.kv[i] = -1
		}
	}
	end := sr.Start + len(sr.TokenIDs)
	if len(sr.BlockTable)*bs < end {
		return fmt.Errorf("%w: request %q: %d blocks for %d tokens", ErrFakeKV, sr.ID, len(sr.BlockTable), end)
	}
	np := len(sr.PromptTokenIDs)
	tokenAt := func(p int) int32 {
		if p < np {
			return sr.PromptTokenIDs[p]
		}
		return sr.OutputTokenIDs[p-np]
	}
	if known := end - len(sr.SpecTokenIDs); known != np+len(sr.OutputTokenIDs) && (len(sr.SpecTokenIDs) > 0 || known > np+len(sr.OutputTokenIDs)) {
		return fmt.Errorf("%w: request %q fed up to %d (%d drafts) of %d known tokens", ErrFakeKV, sr.ID, end, len(sr.SpecTokenIDs), np+len(sr.OutputTokenIDs))
	}
	slot := func(p int) int { return int(sr.BlockTable[p/bs])*bs + p%bs }
	for p := range sr.Start {
		if got, want := f.kv[slot(p)], tokenAt(p); got != want {
			return fmt.Errorf("%w: request %q position %d (block %d) holds %d, want %d",
				ErrFakeKV, sr.ID, p, sr.BlockTable[p/bs], got, want)
		}
	}
	for j, t := range sr.TokenIDs {
		if j >= len(sr.TokenIDs)-len(sr.SpecTokenIDs) {
			f.kv[slot(sr.Start+j)] = t // a draft: right only if accepted
			continue
		}
		if want := tokenAt(sr.Start + j); t != want {
			return fmt.Errorf("%w: request %q fed %d at position %d, want %d", ErrFakeKV, sr.ID, t, sr.Start+j, want)
		}
		f.kv[slot(sr.Start+j)] = t
	}
	return nil
}
