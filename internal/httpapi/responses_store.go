package httpapi

import (
	"container/list"
	"sync"

	"govllm/internal/openai"
)

// DefaultResponsesStoreSize is how many responses the Responses API keeps
// for previous_response_id and GET /v1/responses/{id} when
// Config.ResponsesStoreSize is 0.
const DefaultResponsesStoreSize = 1000

// storedResponse is a finished response and the conversation it ended:
// its input messages (after the previous response's, without the
// instructions, which do not carry over) and its output as an assistant
// message.
type storedResponse struct {
	resp         *openai.Response
	conversation []openai.ChatMessage
}

// responseStore keeps the last max responses in memory, evicting the least
// recently used (stored or read) first. A nil store keeps nothing.
type responseStore struct {
	mu  sync.Mutex
	max int
	ll  *list.List // of *storeEntry, most recent first
	m   map[string]*list.Element
}

type storeEntry struct {
	id string
	v  *storedResponse
}

// newResponseStore is a store of size responses; size < 0 is none (nil).
func newResponseStore(size int) *responseStore {
	if size == 0 {
		size = DefaultResponsesStoreSize
	}
	if size < 0 {
		return nil
	}
	return &responseStore{max: size, ll: list.New(), m: map[string]*list.Element{}}
}

func (st *responseStore) put(id string, v *storedResponse) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if e, ok := st.m[id]; ok {
		e.Value.(*storeEntry).v = v
		st.ll.MoveToFront(e)
		return
	}
	st.m[id] = st.ll.PushFront(&storeEntry{id: id, v: v})
	for st.ll.Len() > st.max {
		old := st.ll.Back()
		st.ll.Remove(old)
		delete(st.m, old.Value.(*storeEntry).id)
	}
}

// get returns the response stored under id (nil when none) and marks it
// recently used.
func (st *responseStore) get(id string) *storedResponse {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	e, ok := st.m[id]
	if !ok {
		return nil
	}
	st.ll.MoveToFront(e)
	return e.Value.(*storeEntry).v
}
