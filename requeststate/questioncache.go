package requeststate

import (
	"sync"

	"github.com/parley-mcp/parley/mcp"
)

// Digesting a question canonicalises its JSON, and a sealed round digests
// each of its questions up to three times (the server names it, the
// boundary pins it when sealing, and checks it when the answer comes back):
// that canonicalisation was a fifth of the CPU profile of a sealed
// two-round tools/call (BENCHMARKS.md, "Profile-driven changes"). A tool's
// questions are nearly always the same from one call to the next, so the
// digests are kept, keyed by the question's exact wire form: the digest is
// a function of those bytes alone, so a hit returns exactly what digesting
// would. Questions whose text varies per call (a message quoting the
// arguments) would fill the cache with entries used once; the bounds below
// keep that to a fixed amount of memory.
const (
	// maxCachedQuestions bounds the entries; when full, it is emptied.
	maxCachedQuestions = 256
	// maxCachedQuestionLen bounds the wire form of a question worth
	// caching: larger ones (big schemas) are rare and digested each time.
	maxCachedQuestionLen = 4 << 10
)

var questionCache = struct {
	sync.RWMutex
	m map[string][questionTagLen]byte
}{m: make(map[string][questionTagLen]byte)}

// cachedQuestionDigest is questionDigest, served from questionCache when
// it can be.
func cachedQuestionDigest(r mcp.InputRequest) (d [questionTagLen]byte, err error) {
	bp := questionBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledQuestion {
			questionBufs.Put(bp)
		}
	}()
	raw, err := mcp.AppendJSON((*bp)[:0], r)
	*bp = raw[:0]
	if err != nil {
		return d, err
	}
	if len(raw) > maxCachedQuestionLen {
		return digestQuestionJSON(raw)
	}
	questionCache.RLock()
	d, ok := questionCache.m[string(raw)] // no allocation: a lookup by bytes
	questionCache.RUnlock()
	if ok {
		return d, nil
	}
	if d, err = digestQuestionJSON(raw); err != nil {
		return d, err
	}
	questionCache.Lock()
	if len(questionCache.m) >= maxCachedQuestions {
		clear(questionCache.m)
	}
	questionCache.m[string(raw)] = d
	questionCache.Unlock()
	return d, nil
}
